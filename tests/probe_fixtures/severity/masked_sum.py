"""A row sum whose masked lanes have no other=: right when they read 0 (today's GPUs), wrong with
anything else. Triton leaves them undefined: the probe warns (P203) and does not fail."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)  # no other=: undefined in masked lanes
    tl.store(out_ptr + row, tl.sum(x, axis=0))


def launch(x):
    out = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
    row_sum_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def make_inputs(*, device, gen, rows=8, cols=100):
    return {"x": torch.randn(rows, cols, generator=gen).to(device)}


def reference(x):
    return x.double().sum(dim=1)
