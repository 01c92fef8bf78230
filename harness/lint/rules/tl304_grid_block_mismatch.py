"""TL304: a grid axis divided by one block size while the kernel steps that axis by another."""

from __future__ import annotations

import ast

from harness.lint.flow import flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import axis_blocks, module_int, strides_over

BAD = '''
import triton
import triton.language as tl

@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, stride_x, stride_o, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * stride_x + rn[None, :], mask=mask)
    tl.store(out_ptr + rn[:, None] * stride_o + rm[None, :], tl.trans(tile), mask=tl.trans(mask))

def transpose(x, out):
    M, N = x.shape
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_M"]))
    transpose_kernel[grid](x, out, M, N, x.stride(0), out.stride(0), BLOCK_M=64, BLOCK_N=32)
'''

GOOD = BAD.replace('triton.cdiv(N, meta["BLOCK_M"])', 'triton.cdiv(N, meta["BLOCK_N"])')


def divisor(node: ast.AST) -> ast.AST | None:
    """``d`` of ``cdiv(n, d)`` or of ``(n + d - 1) // d``: the one divisor of a grid axis."""
    found = [n.args[1] for n in ast.walk(node) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("cdiv")
             and len(n.args) == 2]
    found += [n.right for n in ast.walk(node) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv)]
    return found[0] if len(found) == 1 else None


def meta_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    return None


@rule("TL304", "grid-block-mismatch", cases=("autotune-hides-partial-write",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="a grid axis divided by a block size other than the one the kernel multiplies that axis's "
              "program id by")
def check(module):
    """``cdiv(N, meta["BLOCK_M"])`` for an axis whose programs each cover ``BLOCK_N`` columns launches the
    wrong number of programs: too few leave part of the output unwritten (under autotune, only for some
    configs, and hidden on the first call by the timing runs of the others). Compares names for meta
    grids and numbers for fixed ones; quiet for grid-stride and persistent kernels (a loop stepping by the
    program count covers the axis with any number of programs)."""
    for flow in flows(module):
        blocks = axis_blocks(flow)
        for launch in flow.k.launches:
            grid = launch.grid_axes() or []
            for axis, expr in enumerate(grid):
                d = divisor(expr)
                want = blocks.get(axis)
                if d is None or not want or strides_over(flow, launch, axis, grid):
                    continue  # a grid-stride kernel covers the axis with any number of programs
                name = meta_name(d)
                if name is not None:
                    wrong = name in flow.k.constexprs and name not in want
                else:
                    value = module_int(module, launch.resolve(d))
                    passed = {module_int(module, launch.resolve(launch.args[b])) for b in want if b in launch.args}
                    wrong = value is not None and passed and None not in passed and value not in passed
                if wrong:
                    yield d, (f"grid axis {axis} divides by {ast.unparse(d)}, but the kernel's program_id({axis}) "
                              f"steps by {' or '.join(sorted(want))}: the launch has the wrong number of programs "
                              f"on that axis")
