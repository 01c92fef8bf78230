"""A correct doubling whose first call takes 30 s (as a GPU compilation of a large tile can, at the
file's own sizes): the defaults' run itself does not fit a 20 s budget. The launcher waits in
0.1 s steps, so that a test's clock delivers the budget's alarm within one of them."""

import time

import torch
import triton
import triton.language as tl

CALLS = []


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)


def launch(x):
    if not CALLS:
        for _ in range(300):  # the slow part: 30 s
            time.sleep(0.1)
    CALLS.append(1)
    out = torch.empty_like(x)
    double_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out


def make_inputs(*, device, gen, n=777):
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    return 2.0 * x.double()
