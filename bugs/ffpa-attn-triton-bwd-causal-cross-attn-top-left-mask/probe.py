"""Glue for ffpa-attn's Triton attention backward (ffpa_attn/triton/_ffpa_bwd.py): what ffpa_attn_func's
Triton backend runs for a large head dim. Its torch ops ffpa_attn::_fwd_triton and ffpa_attn::_bwd_triton
(ffpa_attn/triton/__init__.py, registered for CUDA only) allocate the buffers and call
_ffpa_attn_forward_impl(q, k, v, o, lse, ...) and _ffpa_attn_backward_triton_impl(do, q, k, v, o, lse, ...,
dq, dk, dv, ...); the glue makes the same allocations (lse padded to a multiple of 128 rows, dQ zeroed because
its atomics accumulate into it, dK and dV empty) and calls the two functions itself, on the CPU and on a GPU
alike, and returns dQ, dK and dV.

Only the four Triton modules and the logger they import are taken out of the package; ffpa_attn/__init__.py
and ffpa_attn/triton/__init__.py are left empty, so neither the CUDA extension nor the CuTe DSL backend is
imported. Under the interpreter (no CUDA) the device queries the launchers make, torch.cuda's SM count (the
decode split heuristic) and device name, index and capability (the persistent tuned-config lookup), answer
for a stand-in device (132 SMs, capability 9.0, a name no shipped config matches); with CUDA nothing is
patched."""

import contextlib
import importlib
import math
import types

import torch

from harness.bugs.source import load


@contextlib.contextmanager
def _device_queries_on_cpu():
    if torch.cuda.is_available():
        yield
        return
    props = types.SimpleNamespace(multi_processor_count=132, major=9, minor=0, name="interpreter")
    saved = {n: getattr(torch.cuda, n) for n in ("get_device_properties", "current_device", "get_device_name",
                                                 "get_device_capability")}
    torch.cuda.get_device_properties = lambda *_a, **_k: props
    torch.cuda.current_device = lambda: 0
    torch.cuda.get_device_name = lambda *_a, **_k: "interpreter"
    torch.cuda.get_device_capability = lambda *_a, **_k: (9, 0)
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(torch.cuda, name, fn)


def _run(variant, q, k, v, grad_out, causal):
    bwd = load(__file__, variant)
    fwd = importlib.import_module("ffpa_attn.triton._ffpa_fwd")
    batch, heads, seqlen_q, head_dim = q.shape
    scale = 1.0 / math.sqrt(head_dim)
    with _device_queries_on_cpu():
        # as the _fwd_triton op allocates them
        o = torch.empty_like(q)
        lse = torch.empty(batch, heads, (seqlen_q + 127) // 128 * 128, dtype=torch.float32, device=q.device)
        fwd._ffpa_attn_forward_impl(q, k, v, o, lse, causal=bool(causal), softmax_scale=scale)
        # as the _bwd_triton op allocates them
        dq = torch.zeros_like(q)
        dk = torch.empty_like(k)
        dv = torch.empty_like(v)
        bwd._ffpa_attn_backward_triton_impl(
            do=grad_out, q=q, k=k, v=v, o=o, lse=lse, attn_bias=None, dq=dq, dk=dk, dv=dv,
            grad_attn_bias=None, causal=bool(causal), softmax_scale=scale, original_nheads_kv=heads)
    return torch.cat([dq.flatten(), dk.flatten(), dv.flatten()])


def launch_buggy(q, k, v, grad_out, causal):
    return _run("buggy", q, k, v, grad_out, causal)


def launch_fixed(q, k, v, grad_out, causal):
    return _run("fixed", q, k, v, grad_out, causal)


def make_inputs(*, device, gen, batch=1, heads=2, seqlen_q=512, seqlen_k=512, head_dim=320, causal=1):
    """As upstream's backward tests make them: q (batch, heads, seqlen_q, head_dim), k and v (batch, heads,
    seqlen_k, head_dim) and the output gradient, randn float16, head_dim 320 (a large head dim: ffpa_attn_func
    sends 256 and below to aten). seqlen_k is kept >= seqlen_q: with fewer keys than queries a bottom-right
    causal mask leaves the first query rows no key at all, which neither version nor the tests define."""
    seqlen_k = max(int(seqlen_k), int(seqlen_q))
    q = torch.randn(batch, heads, seqlen_q, head_dim, generator=gen, dtype=torch.float16)
    k = torch.randn(batch, heads, seqlen_k, head_dim, generator=gen, dtype=torch.float16)
    v = torch.randn(batch, heads, seqlen_k, head_dim, generator=gen, dtype=torch.float16)
    grad_out = torch.randn(batch, heads, seqlen_q, head_dim, generator=gen, dtype=torch.float16)
    return {"q": q.to(device), "k": k.to(device), "v": v.to(device), "grad_out": grad_out.to(device),
            "causal": int(causal)}


def reference(q, k, v, grad_out, causal):
    """Attention with the lower-right causal mask ffpa-attn documents (query i sees keys up to
    i + seqlen_k - seqlen_q, as upstream's tests build it for SDPA), differentiated by autograd:
    dQ, dK, dV for the output gradient grad_out."""
    with torch.enable_grad():
        q, k, v = (t.detach().double().requires_grad_() for t in (q, k, v))
        seqlen_q, seqlen_k = q.shape[2], k.shape[2]
        s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        if causal:
            row = torch.arange(seqlen_q, device=q.device).view(-1, 1)
            col = torch.arange(seqlen_k, device=q.device).view(1, -1)
            s = s.masked_fill(col > row + (seqlen_k - seqlen_q), float("-inf"))
        out = torch.softmax(s, dim=-1) @ v
        dq, dk, dv = torch.autograd.grad(out, (q, k, v), grad_out.double())
    return torch.cat([dq.flatten(), dk.flatten(), dv.flatten()])


FUZZ = {"batch": (1, 2), "heads": (1, 8), "seqlen_q": (1, 1024), "seqlen_k": (1, 4096)}
