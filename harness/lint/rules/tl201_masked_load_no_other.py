"""TL201 / TL202 share this helper; TL201: a masked tl.load with no ``other=`` feeding a max or argmax."""

from __future__ import annotations

import ast

from harness.lint.registry import HIGH, rule
from harness.lint.rules._twins import neutral_other, padded_reductions

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
