"""TL201 / TL202 share this helper; TL201: a masked tl.load with no ``other=`` feeding a max or argmax."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import REDUCE_MAX, is_none, is_zero, masked_loads, nonneg_stop

BAD = '''
import triton
import triton.language as tl

@triton.jit
def greedy_kernel(logp_ptr, out_ptr, stride, vocab, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    logp = tl.load(logp_ptr + row * stride + cols, mask=cols < vocab)
    tl.store(out_ptr + row, tl.argmax(logp, axis=0))
'''

GOOD = BAD.replace("mask=cols < vocab)", 'mask=cols < vocab, other=-float("inf"))')


def padded_reductions(module, explicit_zero: bool):
    """(reduction call, load call) where a masked load whose padding is 0 (``other=0`` given when
    ``explicit_zero``, no ``other=`` otherwise) reaches a max/min/argmax/argmin, not through tl.where,
    tl.dot, a reduction, or (for max) a function that is never negative."""
    for flow in flows(module):
        loads = {id(c): c for c, other in masked_loads(flow)
                 if (not is_none(other) and is_zero(other)) == explicit_zero and (explicit_zero or other is None)}
        if not loads:
            continue
        nonneg = nonneg_stop(flow)
        for red in flow.calls(*REDUCE_MAX):
            value = arg(red, 0, "input")
            if value is None:
                continue
            is_max = flow.m.tl_call(red) in ("max", "argmax")

            def stop(n, red=red, is_max=is_max):
                name = flow.m.tl_call(n)
                return n is not red and (name in ("where", "dot", "sum", "cumsum", "load") or
                                         name in REDUCE_MAX or (is_max and nonneg(n)))
            for n in flow.sources(value, stop):
                if id(n) in loads:
                    yield red, loads[id(n)]
                    break


@rule("TL201", "masked-load-no-other-max", cases=("masked-load-no-other",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="a masked tl.load with no other= whose value reaches tl.max, tl.min, tl.argmax or tl.argmin")
def check(module):
    """Masked lanes of a ``tl.load`` without ``other=`` are undefined, and 0 on today's GPUs: 0 beats every
    negative value in a max (log-probabilities, scores) and every positive one in a min. Quiet when the
    value passes through ``tl.where`` (the padding is replaced), ``tl.abs``/``tl.exp``/``x * x`` (for a max:
    the values are then never negative), ``tl.dot`` or another reduction."""
    for red, load in padded_reductions(module, explicit_zero=False):
        name = ast.unparse(red.func).rsplit(".", 1)[-1]
        yield red, (f"tl.{name} over a tl.load (line {load.lineno}) with a mask and no other=: the masked lanes "
                    f"read 0 (undefined, in fact), which can win the {name}; pass other=-float('inf') "
                    f"(+inf for a min)")
