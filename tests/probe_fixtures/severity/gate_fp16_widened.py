"""A gate kernel of two results in two formats, as a Gated DeltaNet's decode step computes them: g = -exp(A_log) *
softplus(a + dt_bias) kept in float32, beta = sigmoid(b) stored in b's fp16. The launcher returns them joined by
``torch.cat``, which widens beta to float32: its elements carry fp16's rounding (up to half a unit, a whole one where
a cast truncates), far above float32's tolerance, and a correct kernel cannot do better. ``launch`` is right;
``launch_no_bias`` leaves dt_bias out of the softplus, a wrong formula by far more than a unit."""

import torch
import triton
import triton.language as tl


@triton.jit
def gate_kernel(A_ptr, a_ptr, b_ptr, bias_ptr, g_ptr, beta_ptr, n, heads, BLOCK: tl.constexpr, BIAS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    h = offs % heads
    x = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if BIAS:
        x = x + tl.load(bias_ptr + h, mask=mask, other=0.0)
    sp = tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(x)))
    g = -tl.exp(tl.load(A_ptr + h, mask=mask, other=0.0)) * sp
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(g_ptr + offs, g, mask=mask)
    tl.store(beta_ptr + offs, (1.0 / (1.0 + tl.exp(-b))).to(beta_ptr.dtype.element_ty), mask=mask)


def _launch(A_log, a, b, dt_bias, bias):
    g = torch.empty(a.shape, device=a.device, dtype=torch.float32)
    beta = torch.empty_like(b)
    n = a.numel()
    gate_kernel[(triton.cdiv(n, 256),)](A_log, a, b, dt_bias, g, beta, n, a.shape[-1], BLOCK=256, BIAS=bias)
    return torch.cat([g.reshape(-1), beta.reshape(-1)])


def launch(A_log, a, b, dt_bias):
    return _launch(A_log, a, b, dt_bias, True)


def launch_no_bias(A_log, a, b, dt_bias):
    return _launch(A_log, a, b, dt_bias, False)


def make_inputs(*, device, gen, batch=64, heads=32):
    A_log = torch.rand(heads, generator=gen).log()
    dt_bias = torch.randn(heads, generator=gen) * 0.5
    a = torch.randn(batch, heads, generator=gen).to(torch.float16)
    b = torch.randn(batch, heads, generator=gen).to(torch.float16)
    return {"A_log": A_log.to(device), "a": a.to(device), "b": b.to(device), "dt_bias": dt_bias.to(device)}


def reference(A_log, a, b, dt_bias):
    g = -A_log.double().exp() * torch.nn.functional.softplus(a.double() + dt_bias.double())
    return torch.cat([g.reshape(-1), torch.sigmoid(b.double()).reshape(-1)])
