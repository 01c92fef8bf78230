"""GELU with erf, and a few more libdevice calls, through the three ways kernels reach
libdevice: ``triton.language.extra.libdevice`` (stubs the interpreter returned None for),
``triton.language.extra.cuda.libdevice`` and a name imported from it."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice
from triton.language.extra.libdevice import pow as ld_pow


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    gelu = 0.5 * x * (1.0 + libdevice.erf(x * 0.7071067811865476))
    a = tl.abs(x) + 0.5
    extra = (cuda_libdevice.tanh(x) + libdevice.exp(-a) + libdevice.rsqrt(a) + ld_pow(a, 1.5)
             + libdevice.log1p(a) + libdevice.div_rn(x, 3.0) + cuda_libdevice.fast_expf(-a)
             + libdevice.isnan(x).to(tl.float32))
    tl.store(out_ptr + offs, gelu + extra, mask=mask)


def launch(x):
    out = torch.empty_like(x)
    gelu_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
    return out


def make_inputs(*, device, gen, n=600):
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    x = x.double()
    a = x.abs() + 0.5
    gelu = 0.5 * x * (1.0 + torch.erf(x / 2 ** 0.5))
    return gelu + x.tanh() + (-a).exp() + a.rsqrt() + a ** 1.5 + a.log1p() + x / 3.0 + (-a).exp()
