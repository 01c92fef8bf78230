"""Row-wise L2 normalisation, as one might first write it: one program per row, a block
as wide as the row rounded up to a power of two, and no mask.

Each program loads BLOCK = next_power_of_2(n_cols) elements from the start of its row.
When n_cols is not a power of two the last BLOCK - n_cols lanes run into the next row:
they add the next row's first elements to this row's norm, and store them back scaled
by the wrong factor. The last row runs past the end of both tensors. With
n_cols = 128 (or any power of two) every test passes.

The fix is a mask on both accesses (``rownorm_fixed``, below)::

    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * out_stride + cols, x * inv, mask=mask)

and each tensor's own row stride: ``out = torch.empty_like(x)`` is contiguous where ``x`` is a slice
of a wider buffer (rows further apart than ``n_cols``), so ``x.stride(0)`` is not ``out``'s.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def rownorm_kernel(x_ptr, out_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols)  # no mask: the tail reads the next row
    inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) + eps)
    tl.store(out_ptr + row * stride + cols, x * inv)  # no mask: the tail writes the next row


@triton.jit
def rownorm_fixed_kernel(x_ptr, out_ptr, n_cols, stride, out_stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # row * stride in int64: right past 2**31 elements too
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) + eps)
    tl.store(out_ptr + row * out_stride + cols, x * inv, mask=mask)


def rownorm(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    out = torch.empty_like(x)
    n_rows, n_cols = x.shape
    rownorm_kernel[(n_rows,)](x, out, n_cols, x.stride(0), eps, BLOCK=triton.next_power_of_2(n_cols))
    return out


def rownorm_fixed(x: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    out = torch.empty_like(x)
    n_rows, n_cols = x.shape
    rownorm_fixed_kernel[(n_rows,)](x, out, n_cols, x.stride(0), out.stride(0), eps,
                                    BLOCK=triton.next_power_of_2(n_cols))
    return out
