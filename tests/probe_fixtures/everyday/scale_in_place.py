"""x *= alpha in place: the launcher returns None; the reference returns what x becomes."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


def launch(x, alpha):
    scale_kernel[(triton.cdiv(x.numel(), 128),)](x, alpha, x.numel(), BLOCK=128)


def make_inputs(*, device, gen, n=1000):
    return {"x": torch.randn(n, generator=gen).to(device), "alpha": 3}


def reference(x, alpha):
    return x.double() * alpha
