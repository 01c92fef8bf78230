"""TL603: exp of loaded values, summed and divided by, with no max subtracted."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import value_chain

BAD = '''
import triton
import triton.language as tl

@triton.jit
def softmax_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    num = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)
'''

GOOD = BAD.replace("num = tl.exp(x)", "num = tl.exp(x - tl.max(x, axis=0))")


def nonpositive(flow, node) -> bool:
    """``-tl.abs(x)``, ``-(x * x)``, ``-tl.exp(x)``: an exponent that is never positive cannot overflow."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = node.operand
        return flow.m.tl_call(inner) in ("abs", "exp", "exp2", "sqrt") or isinstance(inner, ast.BinOp) and \
            isinstance(inner.op, ast.Mult) and ast.dump(inner.left) == ast.dump(inner.right)
    return False


@rule("TL603", "softmax-no-max-subtraction", cases=("softmax-no-max-subtraction",), confidence=HIGH, bad=BAD,
      good=GOOD,
      summary="tl.exp/tl.exp2 of loaded values, summed with tl.sum and used as a divisor, with no max subtracted "
              "first")
def check(module):
    """``exp(x)`` overflows fp32 once x > 88.7: the sum is inf and the softmax is NaN and zeros. Subtracting
    the row max first makes every exponent <= 0 and changes nothing else. Quiet when the exponent contains
    any subtraction (``x - m``, an online softmax's ``qk - m_ij``) or is never positive (``-tl.abs(x)``). Only
    the outermost exps of the sum are judged: one inside another's exponent is not what is summed."""
    for flow in flows(module):
        divisors = [n.right for n in flow.nodes if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)]
        found = {id(n) for d in divisors for n in value_chain(flow, d)}  # the divisor is (a scale of) the sum
        sums = [s for s in flow.calls("sum") if id(s) in found]
        for s in sums:
            exps = [e for e in flow.sources(arg(s, 0, "input") or s) if flow.m.tl_call(e) in ("exp", "exp2") and e.args]
            # an exp inside another's exponent (a log-width made a width, then divided into the softmax's input) is
            # not what is summed: the outer one is, and it alone is judged
            inner = {id(n) for e in exps for n in flow.sources(e.args[0]) if n is not e}
            for e in exps:
                if id(e) in inner or nonpositive(flow, e.args[0]):
                    continue
                inside = list(flow.sources(e.args[0]))
                if any(flow.m.tl_call(n) == "load" for n in inside) and not any(
                        isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub) or flow.m.tl_call(n) in (
                            "max", "maximum", "minimum", "clamp", "where") for n in inside):
                    yield e, (f"tl.{flow.m.tl_call(e)} of the loaded values with no max subtracted, summed on line "
                              f"{s.lineno} and divided by: it overflows to inf for inputs above ~88, and the result "
                              f"is NaN; subtract tl.max(x, axis=0) first")
                    break
