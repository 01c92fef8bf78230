"""TL203: padding lanes centred by the mean, then squared and summed (the variance counts them)."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import masked_loads

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
    ``-mean``, and their squares go into the variance: ``var + (BLOCK - N) / N * mean**2``. Fires when the
    difference of a masked load and a ``tl.sum`` of it reaches another ``tl.sum`` without a ``tl.where``
    that puts the padding back to 0."""
    for flow in flows(module):
        loads = {id(c) for c, _ in masked_loads(flow)}
        sums = list(flow.calls("sum"))
        for node in flow.nodes:
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub)):
                continue
            left_loads = {id(n) for n in flow.sources(node.left) if id(n) in loads}
            mean_of = [n for n in flow.sources(node.right) if flow.m.tl_call(n) == "sum"]
            if not left_loads or not any(id(n) in left_loads for s in mean_of for n in flow.sources(s)):
                continue
            for s in sums:
                if s in mean_of:
                    continue
                stop = lambda n: flow.m.tl_call(n) in ("where", "sum", "load", "dot")  # noqa: E731
                if any(n is node for n in flow.sources(arg(s, 0, "input") or s, stop)):
                    yield node, (f"{ast.unparse(node)} turns the masked (0) lanes into -mean, and tl.sum on line "
                                 f"{s.lineno} adds their squares: wrap it as tl.where(mask, "
                                 f"{ast.unparse(node)}, 0.0)")
                    break
