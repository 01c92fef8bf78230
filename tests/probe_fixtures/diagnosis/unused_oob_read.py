"""Elementwise x * s, but the kernel adds 1 (a wrong formula: wrong everywhere). It also loads
s with no mask, so the last block's lanes past n read outside s; those lanes are never stored
(the store is masked), so what they read cannot reach the result. The diagnosis should not
blame that read for the wrong values."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    s = tl.load(s_ptr + offs)  # past the end of s in the last block's tail lanes: read, never stored
    tl.store(out_ptr + offs, x * s + 1.0, mask=mask)  # the wrong formula: + 1


def launch(x, s):
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 64),)](x, s, out, x.numel(), BLOCK=64)
    return out


def make_inputs(*, device, gen, n=1000):
    return {"x": torch.randn(n, generator=gen).to(device), "s": torch.randn(n, generator=gen).to(device)}


def reference(x, s):
    return x.double() * s.double()
