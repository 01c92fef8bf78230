"""Sums of the first lens[b] elements of each row. Past its length a row holds NaN (a cache
slot nobody wrote); the kernel loads the whole row and multiplies the lanes past the length
by 0 instead of masking them, and 0 * NaN is NaN."""

import torch
import triton
import triton.language as tl


@triton.jit
def prefix_sum_kernel(x_ptr, lens_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    n = tl.load(lens_ptr + row)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    keep = (cols < n).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(x * keep, axis=0))  # 0 * NaN past the length


def launch(x, lens):
    out = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
    prefix_sum_kernel[(x.shape[0],)](x, lens, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def make_inputs(*, device, gen, rows=8, cols=64):
    x = torch.randn(rows, cols, generator=gen)
    lens = torch.randint(1, cols, (rows,), generator=gen, dtype=torch.int32)
    for r in range(rows):
        x[r, int(lens[r]):] = float("nan")
    return {"x": x.to(device), "lens": lens.to(device)}


def reference(x, lens):
    return torch.stack([x[r, :int(lens[r])].double().sum() for r in range(x.shape[0])])
