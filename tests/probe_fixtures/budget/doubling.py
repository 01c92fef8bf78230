"""The correct doubling kernel the budget fixtures beside it share (each is a probe file that adds a
slow part of its own): the kernel, a launch of it, make_inputs and the float64 reference."""

import torch
import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)


def double(x):
    out = torch.empty_like(x)
    double_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out


def make_inputs(*, device, gen, n=777):
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    return 2.0 * x.double()
