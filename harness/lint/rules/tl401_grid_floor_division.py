"""TL401: a grid sized by floor division: the partial last block gets no program."""

from __future__ import annotations

import ast

from harness.lint.model import dotted
from harness.lint.registry import HIGH, rule

BAD = '''
import triton
import triton.language as tl

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

def add(x, y, out):
    n = out.numel()
    add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024)
'''

GOOD = BAD.replace("add_kernel[(n // 1024,)]", "add_kernel[(triton.cdiv(n, 1024),)]")


def divisible_checked(launch) -> bool:
    """The launcher asserts or tests a remainder (``assert n % BLOCK == 0``): floor division is then exact."""
    fn = launch.launcher
    return fn is not None and any(isinstance(n, (ast.Assert, ast.If)) and any(
        isinstance(b, ast.BinOp) and isinstance(b.op, ast.Mod) for b in ast.walk(n.test)) for n in ast.walk(fn))


def floor_divisions(expr: ast.AST):
    """``a // b`` that is not the ceil-division idiom ``(a + b - 1) // b``, nor a division by 1 or 2**k of a
    product (``B * H // 2``); ``int(a / b)`` too."""
    for n in ast.walk(expr):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv) and not isinstance(n.left, ast.BinOp) \
                and not (isinstance(n.right, ast.Constant) and n.right.value in (1,)):
            yield n
        elif isinstance(n, ast.Call) and dotted(n.func) == "int" and n.args and isinstance(n.args[0], ast.BinOp) \
                and isinstance(n.args[0].op, ast.Div):
            yield n


@rule("TL401", "grid-floor-division", cases=("grid-floor-division",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="a launch grid computed with n // BLOCK (or int(n / BLOCK)): rounds down")
def check(module):
    """``n // BLOCK`` programs cover ``n - n % BLOCK`` elements: the partial last block gets no program and
    its outputs are never written (for ``n < BLOCK``, nothing is). ``triton.cdiv(n, BLOCK)`` rounds up, and
    the kernel's mask handles the tail. Quiet where the launcher asserts or tests ``n % BLOCK``."""
    for launch in module.launches:
        if divisible_checked(launch):
            continue
        for axis in launch.grid_axes() or []:
            for n in floor_divisions(launch.resolve(axis)):
                yield n, (f"the grid's {ast.unparse(n)} rounds down: the partial last block gets no program and "
                          f"its elements are never computed; use triton.cdiv")
