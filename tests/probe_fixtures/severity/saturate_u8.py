"""Saturates to uint8: most outputs are 255, which is also the poison torch.empty gets; a second
run with another fill shows they were written (no P113)."""

import torch
import triton
import triton.language as tl


@triton.jit
def saturate_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.minimum(tl.maximum(x, 0.0), 255.0)
    tl.store(out_ptr + offs, y.to(tl.uint8), mask=mask)


def launch(x):
    out = torch.empty(x.numel(), device=x.device, dtype=torch.uint8)
    saturate_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out


def make_inputs(*, device, gen, n=1000):
    return {"x": (torch.rand(n, generator=gen) * 2000).floor().to(device)}


def reference(x):
    return x.clamp(0, 255).to(torch.uint8)
