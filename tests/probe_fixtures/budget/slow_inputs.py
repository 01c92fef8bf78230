"""A correct doubling whose make_inputs takes 30 s at the file's own sizes (in 0.1 s steps of
``time.sleep``, which a test points at its own clock): loading the file outlasts a 20 s budget."""

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
    out = torch.empty_like(x)
    double_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out


def make_inputs(*, device, gen, n=777):
    for _ in range(300):
        time.sleep(0.1)
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    return 2.0 * x.double()
