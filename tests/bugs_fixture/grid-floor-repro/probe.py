"""Test fixture: two launches of a scale kernel, the buggy one on a grid that rounds down."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def launch_buggy(x):
    out = torch.empty_like(x)
    scale[(x.numel() // 128,)](x, out, x.numel(), BLOCK=128)  # BUG: rounds down
    return out


def launch_fixed(x):
    out = torch.empty_like(x)
    scale[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out


def make_inputs(*, device, gen, n=1024):
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    return x * 2.0
