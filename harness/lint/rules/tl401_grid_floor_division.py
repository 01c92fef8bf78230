"""TL401: a grid sized by floor division: the partial last block gets no program."""

from __future__ import annotations

import ast

from harness.lint.flow import flows
from harness.lint.model import dotted
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import axis_blocks, masked_blocks, module_int, strides_over

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
        ceil = isinstance(n, ast.BinOp) and isinstance(n.left, ast.BinOp) and isinstance(n.left.op, (ast.Add, ast.Sub))
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv) and not ceil \
                and not (isinstance(n.right, ast.Constant) and n.right.value in (1,)):
            yield n
        elif isinstance(n, ast.Call) and dotted(n.func) == "int" and n.args and isinstance(n.args[0], ast.BinOp) \
                and isinstance(n.args[0].op, ast.Div):
            yield n


def exact(launch, n: ast.AST, module) -> bool:
    """A division lint can see is exact: two numbers (module constants included) that divide, a dividend built
    as ``something * divisor`` (``padded = cdiv(n, B) * B``), or a product one of whose factors the file tests
    for a multiple of the divisor (``(A * L) // 8`` where a gate requires ``L % 128 == 0``)."""
    if not isinstance(n, ast.BinOp):
        return False
    a, b = module_int(module, n.left), module_int(module, n.right)
    if a is not None and b:
        return a % b == 0
    left = launch.resolve(n.left)
    if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mult) and ast.unparse(n.right) in (
            ast.unparse(left.left), ast.unparse(left.right)):
        return True
    return b is not None and b > 0 and any(f % b == 0 for f in tested_multiples(module, factors(left)))


def factors(node: ast.AST) -> set[str]:
    """The source text of each factor of a product (``A * L`` gives ``A`` and ``L``), the node itself included."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return factors(node.left) | factors(node.right) | {ast.unparse(node)}
    return {ast.unparse(node)}


def tested_multiples(module, names: set[str]) -> list[int]:
    """The literal divisors of every remainder test in the file on one of ``names`` (``L % 128 == 0``, ``if L %
    128: return False`` in the function that gates the launch): that factor is a multiple of each, so a product
    holding it divides by any divisor of theirs."""
    tests = []  # remainders used as tests: x % m == 0 (or != 0) anywhere; bare in an if/assert/while condition
    for n in module.nodes:
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], (ast.Eq, ast.NotEq)) and \
                isinstance(n.comparators[0], ast.Constant) and n.comparators[0].value == 0:
            tests.append(n.left)
        elif isinstance(n, (ast.If, ast.Assert, ast.While, ast.IfExp)):
            parts = [n.test]
            while parts:
                t = parts.pop()
                if isinstance(t, ast.BoolOp):
                    parts.extend(t.values)
                elif isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
                    parts.append(t.operand)
                else:
                    tests.append(t)
    out = []
    for t in tests:
        if isinstance(t, ast.BinOp) and isinstance(t.op, ast.Mod) and ast.unparse(t.left) in names:
            value = module_int(module, t.right)
            if value:
                out.append(value)
    return out


@rule("TL401", "grid-floor-division", cases=("grid-floor-division",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="a launch grid computed with n // BLOCK (or int(n / BLOCK)): rounds down")
def check(module):
    """``n // BLOCK`` programs cover ``n - n % BLOCK`` elements: the partial last block gets no program and
    its outputs are never written (for ``n < BLOCK``, nothing is). ``triton.cdiv(n, BLOCK)`` rounds up, and
    the kernel's mask handles the tail. Fires only for a grid axis whose block the kernel masks (it
    expects a partial block there: the launcher drops it); quiet where the launcher asserts or tests
    ``n % BLOCK``, for kernels that assume exact multiples (no mask on that axis), for grid-stride and
    persistent kernels (a loop stepping by ``tl.num_programs`` on that axis covers it with any count), and
    for a division inside a ``cdiv`` (``cdiv(q * (hq // hk), BM)``: a size, then rounded up)."""
    for flow in flows(module):
        blocks, masked = axis_blocks(flow), masked_blocks(flow)
        for launch in flow.k.launches:
            if divisible_checked(launch):
                continue
            grid = launch.grid_axes() or []
            for i, axis in enumerate(grid):
                if not blocks.get(i, set()) & masked or strides_over(flow, launch, i, grid):  # any count covers it
                    continue
                yield from floor_hits(launch, axis, module)


def floor_hits(launch, axis, module):
    axis = launch.resolve(axis)
    sizes = {id(n) for c in ast.walk(axis) if isinstance(c, ast.Call) and ast.unparse(c.func).endswith("cdiv")
             for n in ast.walk(c)}  # cdiv(a // b, BLOCK): a size computed before the axis rounds up
    for n in floor_divisions(axis):
        if exact(launch, n, module) or id(n) in sizes:
            continue
        yield n, (f"the grid's {ast.unparse(n)} rounds down, while the kernel masks a partial block on that axis: "
                  f"the partial last block gets no program and its elements are never computed; use triton.cdiv")
