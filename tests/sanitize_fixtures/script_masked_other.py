"""A row mean whose masked load has no other=: the masked-off lanes enter tl.sum (0 under the
plain interpreter, and often on a GPU; undefined all the same)."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_mean_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)  # no other=
    tl.store(out_ptr + row, tl.sum(x, axis=0) / n_cols)


x = torch.randn(8, 100, device="cuda")
out = torch.empty(8, device="cuda")
row_mean_kernel[(8,)](x, out, 100, BLOCK=128)
print("max error", (out - x.mean(dim=1)).abs().max().item())
