"""A correct doubling whose every call takes 0.3 s (the launcher waits, as a slow kernel would):
shape fuzzing cannot try all its sizes in a short budget, and the budget's end stops it mid-size."""

import time

import torch
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)


def launch(x):
    time.sleep(0.3)  # the slow part
    out = torch.empty_like(x)
    double_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out


def make_inputs(*, device, gen, n=777):
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    return 2.0 * x.double()
