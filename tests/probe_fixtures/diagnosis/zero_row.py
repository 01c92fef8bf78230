"""Rows scaled to unit maximum: x / max|x|. A row of zeros gives 0/0 = NaN where the
reference (which leaves such a row at 0) is finite. The diagnosis should see that the NaN
goes away when the zeros are moved off 0."""

import torch
import triton
import triton.language as tl


@triton.jit
def unit_rows_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    top = tl.max(tl.abs(x), axis=0)
    tl.store(out_ptr + row * n_cols + cols, x / top, mask=mask)  # 0 / 0 for a row of zeros


def launch(x):
    out = torch.empty_like(x)
    unit_rows_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def make_inputs(*, device, gen, rows=8, cols=64):
    x = torch.randn(rows, cols, generator=gen)
    x[rows // 2] = 0.0  # one row of zeros, as padding rows are
    return {"x": x.to(device)}


def reference(x):
    x = x.double()
    top = x.abs().amax(dim=1, keepdim=True)
    return torch.where(top > 0, x / top.clamp_min(1e-300), torch.zeros_like(x))
