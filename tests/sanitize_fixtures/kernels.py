"""A small user's kernels, written for a GPU: two correct ones and two with a trap each.

``harness sanitize`` must report the unmasked add (an out-of-bounds load and store at its
lines) and the sum into ``out[0]`` (a store race between programs), and nothing for the
masked add and the row kernel. Plain Triton, as a kernel author writes it.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_unmasked_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # no mask: the last program reads past the end
    y = tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, x + y)  # no mask: and writes past the end


@triton.jit
def add_masked_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(x, axis=0))  # every program stores its partial sum to out[0]


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


def add_unmasked(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_unmasked_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    return out


def add_masked(x, y):
    out = torch.empty_like(x)
    n = out.numel()
    add_masked_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    return out


def total(x):
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    n = x.numel()
    sum_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
    return out


def row_sums(x):
    rows, cols = x.shape
    out = torch.empty(rows, device=x.device, dtype=x.dtype)
    row_sum_kernel[(rows,)](x, out, cols, x.stride(0), BLOCK=triton.next_power_of_2(cols))
    return out
