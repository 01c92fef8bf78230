"""Glue for mamba_ssm's Mamba-2 (SSD) backward kernel _chunk_scan_chunk_state_bwd_dx_kernel,
called through the module's own launcher _chunk_scan_chunk_state_bwd_dx (dx and ddt of the
chunked scan). mamba-ssm is published only as a source distribution whose setup.py builds
CUDA extensions unless MAMBA_SKIP_CUDA_BUILD=TRUE: that is set here for the download (the
kernels are pure Triton), and einops, which the module imports but this launcher uses only
for a D of one dimension, is stubbed. Without CUDA, the launcher's torch.cuda.device(...)
is a no-op context."""

import os

import torch

from harness.bugs.source import cuda_device_on_cpu, load

os.environ.setdefault("MAMBA_SKIP_CUDA_BUILD", "TRUE")  # for pip's metadata step of the sdist


def _no_einops(*args, **kwargs):
    raise NotImplementedError("einops is stubbed in this glue")


STUBS = {"einops": {"rearrange": _no_einops, "repeat": _no_einops}}
TOLERANCE = {"rtol": 2e-2, "atol": 2e-2}  # fp16 operands of the two tl.dot


def _run(variant, x, dt, dA_cumsum, B, CB, dout, dstates):
    mod = load(__file__, variant, stubs=STUBS)
    kern = mod._chunk_scan_chunk_state_bwd_dx_kernel
    # one of the module's 9 autotune configs (with its pre_hook that zeroes ddt) instead of
    # timing all of them in the interpreter; the bug does not depend on the tile sizes
    kern.configs = [c for c in kern.configs
                    if (c.kwargs["BLOCK_SIZE_M"], c.kwargs["BLOCK_SIZE_N"], c.kwargs["BLOCK_SIZE_K"]) == (64, 64, 32)]
    with cuda_device_on_cpu():
        dx, ddt, _ = mod._chunk_scan_chunk_state_bwd_dx(x, dt, dA_cumsum, B, CB, dout, dstates)
    return torch.cat([dx.float().flatten(), ddt.float().flatten()])


def launch_buggy(x, dt, dA_cumsum, B, CB, dout, dstates):
    return _run("buggy", x, dt, dA_cumsum, B, CB, dout, dstates)


def launch_fixed(x, dt, dA_cumsum, B, CB, dout, dstates):
    return _run("fixed", x, dt, dA_cumsum, B, CB, dout, dstates)


def make_inputs(*, device, gen, batch=1, seqlen=256, nheads=2, headdim=32, dstate=16, chunk_size=256):
    """Mamba-2 shapes, one group, chunks of 256 as in the issue's report; dt in the module's init
    range (0.001, 0.1) and A in its (-16, -1), the cumulative dA per chunk as _chunk_cumsum_fwd
    makes it (dt is 0 past the end of the sequence, so dA_cumsum stays flat there)."""
    nchunks = -(-seqlen // chunk_size)
    f16 = torch.float16
    x = torch.randn(batch, seqlen, nheads, headdim, generator=gen).to(f16)
    dout = torch.randn(batch, seqlen, nheads, headdim, generator=gen).to(f16)
    B = torch.randn(batch, seqlen, 1, dstate, generator=gen).to(f16)
    CB = (torch.randn(batch, nchunks, 1, chunk_size, chunk_size, generator=gen) / dstate ** 0.5).to(f16)
    dstates = torch.randn(batch, nchunks, nheads, headdim, dstate, generator=gen)
    A = -(1.0 + 15.0 * torch.rand(nheads, generator=gen))
    dt = 0.001 + 0.099 * torch.rand(batch, nheads, nchunks * chunk_size, generator=gen)
    dt[:, :, seqlen:] = 0.0
    dt = dt.view(batch, nheads, nchunks, chunk_size)
    dA_cumsum = torch.cumsum(dt * A[None, :, None, None], dim=-1)
    t = {"x": x, "dt": dt, "dA_cumsum": dA_cumsum, "B": B, "CB": CB, "dout": dout, "dstates": dstates}
    return {k: v.to(device) for k, v in t.items()}


def reference(x, dt, dA_cumsum, B, CB, dout, dstates):
    """Per chunk and head, for each position m of the chunk:
    acc[m] = exp(dA[last] - dA[m]) * dstates @ B[m] + sum_{k >= m, k in the chunk} CB[k, m] exp(dA[k] - dA[m]) dout[k]
    dx[m] = acc[m] * dt[m];  ddt[m] = acc[m] . x[m]"""
    x, dt, dA_cumsum, B, CB, dout, dstates = (t.double() for t in (x, dt, dA_cumsum, B, CB, dout, dstates))
    batch, seqlen, nheads, headdim = x.shape
    _, _, nchunks, cs = dt.shape
    dx = torch.zeros(batch, seqlen, nheads, headdim, dtype=torch.float64, device=x.device)
    ddt = torch.zeros(batch, nheads, nchunks, cs, dtype=torch.float64, device=x.device)
    for c in range(nchunks):
        lo, hi = c * cs, min(seqlen, (c + 1) * cs)
        n = hi - lo
        for h in range(nheads):
            dA = dA_cumsum[:, h, c, :n]  # (b, n)
            scale = torch.exp(dA_cumsum[:, h, c, cs - 1:cs] - dA)  # (b, n)
            acc = scale[:, :, None] * torch.einsum("bmd,bpd->bmp", B[:, lo:hi, 0], dstates[:, c, h])
            decay = torch.exp(dA[:, None, :] - dA[:, :, None])  # [m, k] = exp(dA[k] - dA[m])
            causal = torch.triu(torch.ones(n, n, dtype=torch.bool, device=x.device))  # k >= m
            w = torch.where(causal, CB[:, c, 0, :n, :n].transpose(-1, -2) * decay, 0.0)  # [m, k]
            acc = acc + torch.einsum("bmk,bkp->bmp", w, dout[:, lo:hi, h])
            dx[:, lo:hi, h] = acc * dt[:, h, c, :n, None]
            ddt[:, h, c, :n] = (acc * x[:, lo:hi, h]).sum(-1)
    return torch.cat([dx.flatten(), ddt.flatten()])


FUZZ = {"seqlen": (1, 600)}
