"""x / sqrt(x * x + eps): ``eps`` is a float keyword of make_inputs, not a size; make_inputs
refuses any other value of it, so a probe that fuzzed or scaled it would show."""

import torch
import triton
import triton.language as tl


@triton.jit
def soft_sign_kernel(x_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x / tl.sqrt(x * x + eps), mask=mask)


def launch(x, eps):
    out = torch.empty_like(x)
    soft_sign_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), eps, BLOCK=256)
    return out


def make_inputs(*, device, gen, n=1000, eps=1e-5):
    if eps != 1e-5:
        raise ValueError(f"eps is not a size: make_inputs was called with eps={eps!r}")
    return {"x": torch.randn(n, generator=gen).to(device), "eps": eps}


def reference(x, eps):
    x = x.double()
    return x / (x * x + eps).sqrt()
