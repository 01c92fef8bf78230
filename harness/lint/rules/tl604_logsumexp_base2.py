"""TL604: a log-sum-exp computed in base 2 and stored as if it were natural."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import MEDIUM, rule

BAD = '''
import triton
import triton.language as tl

@triton.jit
def logsumexp_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x2 = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf")) * 1.4426950408889634
    m2 = tl.max(x2, axis=0)
    lse = m2 + tl.log2(tl.sum(tl.exp2(x2 - m2), axis=0))
    tl.store(out_ptr + row, lse)
'''

GOOD = BAD.replace("tl.store(out_ptr + row, lse)", "tl.store(out_ptr + row, lse * 0.6931471805599453)")

LOG2E, LN2 = 1.4426950408889634, 0.6931471805599453


def near(node: ast.AST, value: float, module) -> bool:
    if isinstance(node, ast.Name) and node.id in module.constants:
        node = module.constants[node.id]
        if isinstance(node, ast.Call) and node.args:  # tl.constexpr(1.44...)
            node = node.args[0]
    return isinstance(node, ast.Constant) and isinstance(node.value, float) and abs(node.value - value) < 1e-3


def read_in_base2(module) -> bool:
    """A kernel of the file loads a log-sum-exp and feeds it to ``tl.exp2``: the file's own consumer (a merge
    or backward kernel) reads the stored value in base 2, as it was written."""
    for flow in flows(module):
        loads = {id(c) for c in flow.calls("load") if any(w in ast.unparse(arg(c, 0, "pointer") or c).lower()
                                                             for w in ("lse", "logsumexp"))}
        if loads and any(id(n) in loads for c in flow.calls("exp2") for n in flow.sources(c)):
            return True
    return False


@rule("TL604", "logsumexp-base-2", cases=("exp2-wrong-base",), confidence=MEDIUM, bad=BAD, good=GOOD,
      summary="a value stored from m + tl.log2(sum) after scaling by log2(e), never multiplied back by ln(2), in a "
              "kernel or pointer named for a log-sum-exp")
def check(module):
    """``exp2(x * log2(e))`` is ``exp(x)``, so a log-sum-exp computed with exp2 and log2 is in base 2:
    ``lse2 = lse / ln(2)``. Stored as it is, every caller that expects a natural log is off by a factor of
    1.44. Fires only where the kernel or the pointer stored into says lse/logsumexp (the flash-attention
    tutorial keeps its base-2 ``M`` on purpose, for its own backward), and never where a kernel of the same
    file loads the log-sum-exp back into ``tl.exp2`` (a merge kernel that reads it in base 2)."""
    if read_in_base2(module):
        return
    for flow in flows(module):
        named = "lse" in flow.k.name.lower() or "logsumexp" in flow.k.name.lower()
        scales = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and
                     (near(n.left, LOG2E, module) or near(n.right, LOG2E, module)) for n in flow.nodes)
        if not scales:
            continue
        for call in flow.calls("store"):
            pointer, value = arg(call, 0, "pointer"), arg(call, 1, "value")
            if value is None or not (named or "lse" in ast.unparse(pointer).lower()):
                continue
            nodes = list(flow.sources(value))
            back = any(isinstance(n, ast.BinOp) and (isinstance(n.op, ast.Mult) and (near(n.left, LN2, module) or
                       near(n.right, LN2, module)) or isinstance(n.op, ast.Div) and near(n.right, LOG2E, module))
                       for n in nodes)
            if any(flow.m.tl_call(n) == "log2" for n in nodes) and not back:
                yield call, ("stores a log-sum-exp computed with exp2/log2 on x * log2(e): the value is in base 2 "
                             "(the natural one times 1/ln 2); multiply by ln(2) = 0.6931471805599453 before storing")
