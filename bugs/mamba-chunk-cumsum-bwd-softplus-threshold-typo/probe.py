"""Glue for mamba_ssm's Mamba-2 (SSD) kernel _chunk_cumsum_bwd_kernel, the backward of
dt -> softplus(dt + dt_bias) -> clamp -> dA = dt * A, called through the module's own launcher
_chunk_cumsum_bwd. mamba-ssm is published only as a source distribution whose setup.py
builds CUDA extensions unless MAMBA_SKIP_CUDA_BUILD=TRUE: that is set here for the download
(the kernels are pure Triton); einops, imported by the module but not by this launcher, is
stubbed. Without CUDA, the launcher's torch.cuda.device(...) is a no-op context."""

import os

import torch

from harness.bugs.source import cuda_device_on_cpu, load

os.environ.setdefault("MAMBA_SKIP_CUDA_BUILD", "TRUE")  # for pip's metadata step of the sdist


def _no_einops(*args, **kwargs):
    raise NotImplementedError("einops is stubbed in this glue")


STUBS = {"einops": {"rearrange": _no_einops, "repeat": _no_einops}}


def _run(variant, ddA, ddt_out, dt, A, dt_bias):
    mod = load(__file__, variant, stubs=STUBS)
    kern = mod._chunk_cumsum_bwd_kernel
    # one of the module's 7 autotune configs (with its pre_hook that zeroes dA and ddt_bias)
    # instead of timing all of them in the interpreter
    kern.configs = [c for c in kern.configs if c.kwargs["BLOCK_SIZE_H"] == 2]
    with cuda_device_on_cpu():
        ddt, dA, ddt_bias = mod._chunk_cumsum_bwd(ddA, ddt_out, dt, A, dt_bias=dt_bias, dt_softplus=True)
    return torch.cat([ddt.flatten(), dA.flatten(), ddt_bias.flatten()])


def launch_buggy(ddA, ddt_out, dt, A, dt_bias):
    return _run("buggy", ddA, ddt_out, dt, A, dt_bias)


def launch_fixed(ddA, ddt_out, dt, A, dt_bias):
    return _run("fixed", ddA, ddt_out, dt, A, dt_bias)


def make_inputs(*, device, gen, batch=2, seqlen=200, nheads=4, chunk_size=64, dt_std=2):
    """Raw dt (before dt_bias and softplus) ~ N(0, dt_std^2); dt_bias in the module's init
    range (softplus^-1 of 0.001..0.1); the incoming gradients ddA, ddt_out ~ N(0, 1)."""
    nchunks = -(-seqlen // chunk_size)
    dt = torch.randn(batch, seqlen, nheads, generator=gen) * dt_std
    target = torch.exp(torch.empty(nheads).uniform_(-6.9, -2.3, generator=gen))
    dt_bias = target + torch.log(-torch.expm1(-target))  # softplus(dt_bias) = target
    A = -torch.empty(nheads).uniform_(1.0, 16.0, generator=gen)
    ddA = torch.randn(batch, nheads, nchunks, chunk_size, generator=gen)
    ddt_out = torch.randn(batch, nheads, nchunks, chunk_size, generator=gen)
    t = {"ddA": ddA, "ddt_out": ddt_out, "dt": dt, "A": A, "dt_bias": dt_bias}
    return {k: v.to(device) for k, v in t.items()}


def reference(ddA, ddt_out, dt, A, dt_bias):
    """dt_sp = softplus(dt + dt_bias) (identity past 20, as torch's softplus), clamped to
    (0, inf): the gradient g = ddA * A + ddt_out flows back through the clamp (zero where it
    clamps) and the softplus (times sigmoid(dt + dt_bias) up to 20); dA = sum ddA * dt_sp,
    ddt_bias = sum of the gradient, per head."""
    ddA, ddt_out, dt, A, dt_bias = (t.double() for t in (ddA, ddt_out, dt, A, dt_bias))
    batch, seqlen, nheads = dt.shape
    _, _, nchunks, cs = ddA.shape
    flat = lambda t: t.permute(0, 2, 3, 1).reshape(batch, nchunks * cs, nheads)[:, :seqlen]
    ddA_s, ddt_out_s = flat(ddA), flat(ddt_out)  # (batch, seqlen, nheads)
    pre = dt + dt_bias
    dt_sp = torch.nn.functional.softplus(pre, threshold=20.0)
    clamp = dt_sp < 0.0
    g = ddA_s * A + ddt_out_s
    g = torch.where(clamp, 0.0, g)
    g = torch.where(pre <= 20.0, g * torch.sigmoid(pre), g)
    dA = (ddA_s * dt_sp.clamp(min=0.0)).sum(dim=(0, 1))
    return torch.cat([g.flatten(), dA, g.sum(dim=(0, 1))])


TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}  # sums of a few hundred float32 terms
FUZZ = {"seqlen": (1, 400)}
