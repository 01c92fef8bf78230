"""TL202: a masked tl.load padded with ``other=0`` feeding a max or argmax."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._twins import neutral_other, padded_reductions

BAD = '''
import triton
import triton.language as tl

@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)
'''

GOOD = BAD.replace("other=0.0", 'other=-float("inf")')

SOFTMAX = ("exp", "exp2")


def float_scores(module, red: ast.Call, load: ast.Call) -> bool:
    """The padded values are floats that can be negative: ``other=0.0`` says so, or the max (or the load)
    feeds ``tl.exp`` (a softmax or log-sum-exp of scores). An integer ``other=0`` with no such use is
    a max of counts, lengths or indices, which are never negative, so 0 cannot win."""
    other = arg(load, 2, "other")
    if isinstance(other, ast.Constant) and isinstance(other.value, float):
        return True
    flow = next((f for f in flows(module) if red in f.parents), None)
    return flow is not None and any(n is red or n is load for c in flow.calls(*SOFTMAX) for n in flow.sources(c))


@rule("TL202", "padding-zero-max", cases=("softmax-mask-fill-zero",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="a masked tl.load padded with other=0 whose value reaches tl.max, tl.min, tl.argmax or tl.argmin")
def check(module):
    """0 is the identity of a sum, not of a max: a row of negative scores padded with 0 has the max 0, and a
    softmax then also adds ``exp(0 - 0)`` for every padding lane to the denominator. Quiet for other=-inf,
    and where the reduced value is not the load itself (give or take a scale): through ``tl.where``, a call
    such as ``tl.abs`` or ``tl.exp`` (never negative, so 0 cannot win a max), or another block; quiet for an
    integer ``other=0`` whose max feeds no ``tl.exp``: a max of lengths or counts, never negative."""
    for _, red, load in padded_reductions(module, explicit_zero=True):
        if not float_scores(module, red, load):
            continue
        name = ast.unparse(red.func).rsplit(".", 1)[-1]
        yield red, (f"tl.{name} over a tl.load (line {load.lineno}) whose masked lanes are filled with 0: the "
                    f"padding can win the {name}; fill with -float('inf') for a max (+inf for a min)"), \
            "softmax-mask-fill-zero", neutral_other(load, name)
