"""Row sums that return the (empty) output at once when there are no rows.

With no rows there is nothing to compute and nothing to launch; returning before the
launch heuristics run is the fix Triton's own ``triton_kernels`` reduce adopted for
empty shapes. (Clamping ``num_progs`` to at least 1 would also work, at the cost of
launching a program with nothing to do.)
"""

import torch
import triton
import triton.language as tl

NUM_SMS = 132  # an H100's; a real launcher asks torch.cuda.get_device_properties(...)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, stride, n_rows, n_cols, rows_per_prog, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    for row in range(pid * rows_per_prog, tl.minimum((pid + 1) * rows_per_prog, n_rows)):
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + row, tl.sum(x, axis=0))


def row_sum(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    if n_rows == 0:  # FIX: nothing to compute, and the launch heuristics below divide by the row count
        return out
    num_progs = min(n_rows, NUM_SMS)
    rows_per_prog = triton.cdiv(n_rows, num_progs)
    row_sum_kernel[(num_progs,)](x, out, x.stride(0), n_rows, n_cols, rows_per_prog, BLOCK=triton.next_power_of_2(n_cols))
    return out
