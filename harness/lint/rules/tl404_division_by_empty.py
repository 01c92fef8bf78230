"""TL404: a launcher that divides by a size that is 0 for an empty input."""

from __future__ import annotations

import ast

from harness.lint.model import dotted
from harness.lint.registry import MEDIUM, rule

BAD = '''
import triton
import triton.language as tl

@triton.jit
def row_sum_kernel(x_ptr, out_ptr, stride, n_rows, rows_per_prog, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for row in range(pid * rows_per_prog, tl.minimum((pid + 1) * rows_per_prog, n_rows)):
        tl.store(out_ptr + row, tl.sum(tl.load(x_ptr + row * stride + tl.arange(0, BLOCK))))

def row_sum(x, out):
    n_rows, n_cols = x.shape
    num_progs = min(n_rows, 132)
    rows_per_prog = triton.cdiv(n_rows, num_progs)
    row_sum_kernel[(num_progs,)](x, out, x.stride(0), n_rows, rows_per_prog, BLOCK=n_cols)
'''

GOOD = BAD.replace("    num_progs = min(", "    if n_rows == 0:\n        return out\n    num_progs = min(")


def capped_sizes(fn: ast.FunctionDef) -> dict[str, set[str]]:
    """Names in the launcher bound to ``min(<a size>, ...)``, where a size is 0 for an empty batch: the first
    name unpacked from ``x.shape`` (the count of rows, tokens, sequences) or one bound to ``x.numel()``. A later
    dimension (a width, a table's column count) keeps its size when the batch is empty. Each with the size
    names it comes from."""
    plain: set[str] = set()
    out: dict[str, set[str]] = {}
    for n in ast.walk(fn):
        if not isinstance(n, ast.Assign):
            continue
        for t in n.targets:
            v = n.value
            if isinstance(t, ast.Tuple) and isinstance(v, ast.Attribute) and v.attr == "shape":
                plain |= {t.elts[0].id} if t.elts and isinstance(t.elts[0], ast.Name) else set()
            elif isinstance(t, ast.Name) and isinstance(v, ast.Call) and dotted(v.func).endswith("numel"):
                plain.add(t.id)
            elif isinstance(t, ast.Name) and isinstance(v, ast.Call) and dotted(v.func) == "min":
                roots = {a.id for a in v.args if isinstance(a, ast.Name) and a.id in plain}
                if roots:
                    out[t.id] = roots
    return out


def bound_there(fn: ast.FunctionDef, name: str, line: int) -> bool:
    """Whether ``name``'s last assignment in the launcher before ``line`` is a ``min(...)``: one reassigned after it
    (``b = min(cap, n)`` then ``b = 2 ** floor(log2(b))``) holds what the later line made, not the capped size."""
    last = max(((n.lineno, n) for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                and n.lineno < line and any(isinstance(t, ast.Name) and t.id == name
                                            for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))),
               default=None, key=lambda x: x[0])
    return last is not None and isinstance(last[1], ast.Assign) and isinstance(last[1].value, ast.Call) and \
        dotted(last[1].value.func) == "min"


def guarded(fn: ast.FunctionDef, names: set[str], line: int) -> bool:
    """An ``if``/``assert`` before ``line`` that tests one of ``names`` (or any numel): an early return."""
    return any(isinstance(n, (ast.If, ast.Assert, ast.IfExp)) and n.lineno < line and any(
        isinstance(x, ast.Name) and x.id in names or isinstance(x, ast.Attribute) and x.attr == "numel"
        for x in ast.walk(n.test)) for n in ast.walk(fn))


@rule("TL404", "division-by-empty-size", cases=("empty-input",), confidence=MEDIUM, bad=BAD, good=GOOD,
      summary="a launcher that divides by min(<a tensor's size>, ...) with no early return for an empty tensor")
def check(module):
    """``cdiv(n_rows, min(n_rows, NUM_SMS))`` raises ZeroDivisionError for a tensor with no rows: the launch
    heuristics of persistent kernels divide by sizes that an empty batch makes 0. Return early for an empty
    input (``if n_rows == 0: return out``). Only ``min(size, ...)`` divisors, with a size that is 0 for an empty
    batch (the leading dimension, the element count): a plain ``n % size`` is left alone."""
    launchers = {id(l.launcher): l.launcher for l in module.launches if l.launcher is not None}
    for fn in launchers.values():
        names = capped_sizes(fn)
        for n in ast.walk(fn):
            divisor = n.args[1] if isinstance(n, ast.Call) and dotted(n.func).endswith("cdiv") and len(n.args) == 2 \
                else n.right if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Div, ast.FloorDiv, ast.Mod)) \
                else None
            if isinstance(divisor, ast.Name) and divisor.id in names and bound_there(fn, divisor.id, n.lineno) and \
                    not guarded(fn, names[divisor.id] | {divisor.id}, n.lineno):
                yield n, (f"{ast.unparse(n)} divides by {divisor.id}, which is 0 for an empty input: "
                          f"ZeroDivisionError; return early when the tensor is empty")
