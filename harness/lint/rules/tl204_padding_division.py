"""TL204: a division by a masked load whose padding is 0, summed without tl.where."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import is_zero, masked_loads, value_chain

BAD = '''
import triton
import triton.language as tl

@triton.jit
def mean_ratio_kernel(p_ptr, q_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    p = tl.load(p_ptr + row * stride + cols, mask=mask, other=0.0)
    q = tl.load(q_ptr + row * stride + cols, mask=mask, other=0.0)
    ratio = p / q
    tl.store(out_ptr + row, tl.sum(ratio, axis=0) / n_cols)
'''

GOOD = BAD.replace("ratio = p / q", "ratio = tl.where(mask, p / q, 0.0)")

REDUCTIONS = ("sum", "max", "min", "argmax", "argmin", "cumsum", "reduce")


@rule("TL204", "padding-division", cases=("padding-division-by-zero",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="a division by a masked load padded with 0, reduced over the block: 0 / 0 is NaN in the padding")
def check(module):
    """The padding lanes of ``q`` are 0 (``other=0`` or none), so ``p / q`` is ``0 / 0 = NaN`` there, and a
    reduction over the block is NaN. Fires when the divisor is such a load (give or take a scale: not a
    reduction of it, nor ``q + eps``) and the quotient
    reaches a reduction without ``tl.where``; quiet with other=1 or a ``tl.where(mask, p / q, 0)``."""
    for flow in flows(module):
        zero_loads = {id(c) for c, other in masked_loads(flow) if is_zero(other)}
        divs = [node for node in flow.nodes if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and
                any(id(n) in zero_loads for n in value_chain(flow, node.right))]
        for red in flow.calls(*REDUCTIONS):
            value = arg(red, 0, "input")
            hit = value is not None and next((d for d in divs for n in flow.sources(
                value, lambda n: flow.m.tl_call(n) in ("where", "load", "dot")) if n is d), None)
            if hit:
                yield hit, (f"{ast.unparse(hit)} divides by a masked load whose padding lanes are 0: 0 / 0 = NaN "
                            f"there, and tl.{flow.m.tl_call(red)} on line {red.lineno} adds it in; select with "
                            f"tl.where(mask, {ast.unparse(hit)}, 0.0) (or load the divisor with other=1.0)")
                divs.remove(hit)
