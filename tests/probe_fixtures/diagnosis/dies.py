"""A launcher whose process dies (SIGABRT, as a kernel corrupting the host heap makes it) on
rows whose length is not a multiple of 16: the diagnosis must still start at those sizes, in a
new process, instead of saying there was no wrong result to take apart."""

import os

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def launch(x):
    if x.numel() % 16:
        os.abort()
    out = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
    return out


def make_inputs(*, device, gen, n=100):
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    return x.double()
