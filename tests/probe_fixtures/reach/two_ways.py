"""A row sum with two bugs of two kinds: each program sums two rows, and the grid is
``batch // 2`` (an odd batch leaves its last row never written); the masked lanes load 1.0
instead of 0.0 (a width that is not a power of two gives wrong sums). The default sizes
(an even batch, a power-of-two width) show neither."""

import torch
import triton
import triton.language as tl


@triton.jit
def _row_sums(x_ptr, out_ptr, width, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    m = cols < width
    for i in tl.static_range(2):
        row = tl.program_id(0) * 2 + i
        x = tl.load(x_ptr + row * width + cols, mask=m, other=1.0)  # 1.0 enters the sum
        tl.store(out_ptr + row, tl.sum(x))


def launch(x):
    batch, width = x.shape
    out = torch.empty(batch, device=x.device, dtype=x.dtype)
    _row_sums[(batch // 2,)](x, out, width, BLOCK=triton.next_power_of_2(width))  # an odd batch: last row
    return out


def make_inputs(*, device, gen, batch=4, width=16):
    return {"x": torch.randn(batch, width, generator=gen).to(device)}


def reference(x):
    return x.double().sum(dim=1)
