"""Row sums of x with a scale per group of 128 columns, read in tiles of BLOCK = 64 columns.
The scale pointer steps BLOCK // GROUP groups per tile: 64 // 128 = 0, so every tile uses the
first group's scale (the shape of a real FP8 block-GEMM bug). One program per row, whatever
the row's length: right when the loop runs once (cols = 64), wrong when it runs more. The
diagnosis should see that more trips of the loop, not more programs, make it wrong."""

import torch
import triton
import triton.language as tl


@triton.jit
def group_scaled_sum_kernel(x_ptr, s_ptr, out_ptr, n_cols, n_groups, BLOCK: tl.constexpr, GROUP: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    s_row = s_ptr + row * n_groups
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        acc += x * tl.load(s_row)
        s_row += BLOCK // GROUP  # BUG: 0 when a tile is smaller than a group
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def launch(x, s):
    out = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    group_scaled_sum_kernel[(x.shape[0],)](x, s, out, x.shape[1], s.shape[1], BLOCK=64, GROUP=128)
    return out


def make_inputs(*, device, gen, rows=4, cols=512):
    x = torch.randn(rows, cols, generator=gen)
    s = torch.rand(rows, triton.cdiv(cols, 128), generator=gen) + 0.5
    return {"x": x.to(device), "s": s.to(device)}


def reference(x, s):
    scale = s.double().repeat_interleave(128, dim=1)[:, : x.shape[1]]
    return (x.double() * scale).sum(dim=1)
