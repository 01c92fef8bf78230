"""TL201 / TL202 share this helper; TL201: a masked tl.load with no ``other=`` feeding a max or argmax."""

from __future__ import annotations

import ast

from harness.lint.fixes import Fix, insert_keyword
from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import REDUCE_MAX, is_none, is_zero, masked_loads, value_chain

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


def neutral_other(load: ast.Call, reduction: str) -> Fix:
    """``other=`` the neutral element of the max or min that reduces the load: -inf or +inf."""
    value = 'float("-inf")' if reduction in ("max", "argmax") else 'float("inf")'
    return insert_keyword(load, "other", value, f"other={value} on the tl.load on line {load.lineno}", index=2)


def padded_reductions(module, explicit_zero: bool):
    """(reduction call, load call) where what a max/min/argmax/argmin reduces *is* a masked load whose
    padding is 0 (``other=0`` given when ``explicit_zero``, no ``other=`` otherwise), give or take a scale
    or an offset by a number (``value_chain``): not through tl.where, a call (tl.abs, tl.exp: never
    negative), nor arithmetic with another block."""
    for flow in flows(module):
        loads = {id(c): c for c, other in masked_loads(flow)
                 if (not is_none(other) and is_zero(other)) == explicit_zero and (explicit_zero or other is None)}
        if not loads:
            continue
        for red in flow.calls(*REDUCE_MAX):
            value = arg(red, 0, "input")
            if value is None:
                continue
            for n in value_chain(flow, value):
                if id(n) in loads:
                    yield red, loads[id(n)]
                    break


@rule("TL201", "masked-load-no-other-max", cases=("masked-load-no-other",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="a masked tl.load with no other= whose value reaches tl.max, tl.min, tl.argmax or tl.argmin")
def check(module):
    """Masked lanes of a ``tl.load`` without ``other=`` are undefined, and 0 on today's GPUs: 0 beats every
    negative value in a max (log-probabilities, scores) and every positive one in a min. Fires only when
    the reduced value is the load itself, give or take a scale or an offset by a number; quiet when it
    passes through ``tl.where`` (the padding is replaced), any call (``tl.abs``, ``tl.exp``: never
    negative), or arithmetic with another block."""
    for red, load in padded_reductions(module, explicit_zero=False):
        name = ast.unparse(red.func).rsplit(".", 1)[-1]
        yield red, (f"tl.{name} over a tl.load (line {load.lineno}) with a mask and no other=: the masked lanes "
                    f"read 0 (undefined, in fact), which can win the {name}; pass other=-float('inf') "
                    f"(+inf for a min)"), "masked-load-no-other", neutral_other(load, name)
