"""exp(x) / sum(exp(x)) without subtracting the row's max first: at the logits' default
magnitude exp overflows float32 to inf and inf / inf is NaN; scaled down, the same kernel is
right. The diagnosis should see the magnitude."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x)  # no max subtracted
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


def launch(x):
    out = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def make_inputs(*, device, gen, rows=8, cols=64):
    return {"x": (torch.randn(rows, cols, generator=gen) * 40 + 60).to(device)}


def reference(x):
    return torch.softmax(x.double(), dim=1)
