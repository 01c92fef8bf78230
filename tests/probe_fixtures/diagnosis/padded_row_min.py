"""A row minimum over blocks of 128 columns whose padded lanes load 0.0 (``other=0.0``): the values are all
positive, so a padded lane wins the minimum wherever the row's length is not a multiple of 128. The default row
(40 columns) sits inside one block: the tail experiment must try the kernel's own block (128) however small the
size, and sees it right at 128 columns and wrong again at 168."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_min_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    best = tl.full([BLOCK], float("inf"), tl.float32)
    for c0 in range(0, tl.cdiv(n, BLOCK) * BLOCK, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=0.0)  # BUG: other=float("inf")
        best = tl.minimum(best, x)
    tl.store(out_ptr + row, tl.min(best, axis=0))


def launch(x):
    out = torch.empty(x.shape[0], dtype=torch.float32, device=x.device)
    row_min_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=128)
    return out


def make_inputs(*, device, gen, rows=4, n=40):
    return {"x": (torch.rand(rows, n, generator=gen) + 1.0).to(device)}


def reference(x):
    return x.min(dim=1).values
