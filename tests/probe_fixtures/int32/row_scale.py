"""A row kernel whose row offset ``row * n_cols`` is computed in int32 (launch), and its twin that widens the
program id to int64 first (launch_fixed). Both are right at every size the interpreter can run; past 2**31
elements the first one's offset wraps negative. make_inputs tiles a random block of rows on the device, so a
run past 2**31 elements makes its inputs in a GPU copy, not a CPU generator's minute."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_scale_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, 2.0 * x, mask=mask)


@triton.jit
def row_scale_kernel_64(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, 2.0 * x, mask=mask)


def _run(kernel, x):
    out = torch.empty_like(x)
    kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out.sum(dim=1)  # one number a row: a float64 copy of the whole result would not fit past 2**31


def launch(x):
    return _run(row_scale_kernel, x)


def launch_fixed(x):
    return _run(row_scale_kernel_64, x)


def make_inputs(*, device, gen, rows=64, n_cols=1000):
    block = torch.randn(min(rows, 256), n_cols, generator=gen).to(device)
    return {"x": block.repeat(-(-rows // block.shape[0]), 1)[:rows].contiguous()}


def reference(x):
    return (2.0 * x.double()).sum(dim=1)
