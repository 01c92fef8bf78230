"""Per-row scaling with the rows on grid axis 1: past 65,535 rows the launch fails.

A 2-D grid reads naturally as "blocks of columns across, rows down":
``grid = (cdiv(cols, BLOCK), rows)``, with ``tl.program_id(1)`` the row. Kernels
ported from CUDA often look like this, and so do many attention-style kernels with
``grid = (blocks, batch * heads)``.

CUDA limits the grid to 2**31 - 1 programs along x but only 65,535 along y and z.
Triton passes the grid to ``cuLaunchKernel`` as it is, so once ``rows`` (batch x
heads, tokens, sequences) passes 65,535 the launch is rejected:
``RuntimeError: Triton Error [CUDA]: invalid argument``. Nothing in the kernel is
wrong; the limit is a property of the hardware's grid, and the interpreter, which
loops over the grid in Python, does not have it.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def row_scale_kernel(x_ptr, scale_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    col_block = tl.program_id(0)  # BUG: the short dimension on axis 0 ...
    row = tl.program_id(1)  # BUG: ... and the long one on axis 1, which holds at most 65,535 programs
    cols = col_block * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask)
    s = tl.load(scale_ptr + row)
    tl.store(out_ptr + row * n_cols + cols, x * s, mask=mask)


def row_scale(x: torch.Tensor, scale: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    grid = (triton.cdiv(n_cols, 64), n_rows)  # BUG: n_rows programs along y
    row_scale_kernel[grid](x, scale, out, n_cols, x.stride(0), BLOCK=64)
    return out
