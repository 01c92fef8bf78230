"""Row sums with a persistent launcher that divides by the number of programs.

A persistent kernel launches about one program per SM and has each program walk a
contiguous range of rows. The launcher sizes that range with ``cdiv(n_rows,
num_progs)``, and takes ``num_progs = min(n_rows, NUM_SMS)`` so as not to launch idle
programs for small inputs. Every size works, down to one row. At zero rows
``num_progs`` is 0 and ``cdiv(0, 0)`` raises ``ZeroDivisionError``, in the host code,
before any kernel runs: an empty batch crashes a function whose right answer is an
empty tensor. Triton itself would have been fine: a grid with zero programs is not
launched at all.
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
    num_progs = min(n_rows, NUM_SMS)
    rows_per_prog = triton.cdiv(n_rows, num_progs)  # BUG: ZeroDivisionError when there are no rows
    row_sum_kernel[(num_progs,)](x, out, x.stride(0), n_rows, n_cols, rows_per_prog, BLOCK=triton.next_power_of_2(n_cols))
    return out
