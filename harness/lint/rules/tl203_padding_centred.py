"""TL203: padding lanes centred by the mean, then squared and summed (the variance counts them)."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import masked_loads, value_chain

BAD = '''
import triton
import triton.language as tl

@triton.jit
def layer_norm_kernel(x_ptr, y_ptr, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / N
    xc = x - mean
    var = tl.sum(xc * xc, axis=0) / N
    tl.store(y_ptr + row * stride + cols, xc / tl.sqrt(var + eps), mask=mask)
'''

GOOD = BAD.replace("xc = x - mean", "xc = tl.where(mask, x - mean, 0.0)")


@rule("TL203", "padding-centred-variance", cases=("layernorm-padding-variance",), confidence=HIGH, bad=BAD,
      good=GOOD, summary="x - mean over a masked block, then summed (a variance): each padding lane adds mean**2")
def check(module):
    """The padding lanes of a masked load are 0, which adds nothing to the mean; after ``x - mean`` they are
    ``-mean``, and their squares go into the variance: ``var + (BLOCK - N) / N * mean**2``. Fires when a masked load minus (a scale of) its own
    ``tl.sum`` is squared and summed, with no ``tl.where`` that puts the padding back to 0 between."""
    for flow in flows(module):
        loads = {id(c) for c, _ in masked_loads(flow)}
        for node in flow.nodes:
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)):
                continue
            x = {id(n) for n in value_chain(flow, node.left) if id(n) in loads}
            means = [n for n in value_chain(flow, node.right) if flow.m.tl_call(n) == "sum"]
            if not x or not any(id(n) in x for m in means for n in value_chain(flow, arg(m, 0, "input") or m)):
                continue
            for s in flow.calls("sum"):
                square = next((n for n in value_chain(flow, arg(s, 0, "input") or s) if squares(n)), None)
                if square is not None and any(n is node for n in value_chain(flow, square.left)):
                    yield node, (f"{ast.unparse(node)} turns the masked (0) lanes into -mean, and tl.sum on line "
                                 f"{s.lineno} adds their squares: wrap it as tl.where(mask, {ast.unparse(node)}, 0.0)")
                    break


def squares(n: ast.AST) -> bool:
    """``a * a`` or ``a ** 2``."""
    return isinstance(n, ast.BinOp) and (isinstance(n.op, ast.Mult) and ast.dump(n.left) == ast.dump(n.right) or
                                         isinstance(n.op, ast.Pow) and isinstance(n.right, ast.Constant) and
                                         n.right.value == 2)
