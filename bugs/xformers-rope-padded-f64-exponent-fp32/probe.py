"""Glue for xformers.ops.rope_padded (RoPE + KV-cache emplacement) with internal_dtype="f64".

The project's own launcher rope_padded() is called. Its imports that the kernel does not
need (the attention-bias classes, xformers/__init__'s CUDA checks) are stood in for here:
the attention bias is a plain namespace with the fields the launcher reads.
"""

import importlib
import os
import sys
import types
from pathlib import Path

import torch
import triton
import triton.language as tl

from harness.bugs.manifest import read
from harness.bugs.source import cuda_device_on_cpu, fetch, interpreter_fixes, load

THETA = 10000.0




@triton.jit
def _pow_exp_log(x, y):
    return tl.exp(y * tl.log(x))


_pow_exp_log._interp = True


def _interpreter_pow(kernels):
    """Triton 3.7's interpreter has no libdevice (its pow is a stub returning None): under the
    interpreter only, the kernel module's pow becomes exp(y * log(x)), which promotes mixed
    fp64 / fp32 operands to fp64 as libdevice's pow does when compiled."""
    if os.environ.get("TRITON_INTERPRET") != "1" or getattr(kernels.pow, "_interp", False):
        return
    kernels.pow = _pow_exp_log


def _mod(variant):
    interpreter_fixes("float-args")  # what compiled Triton does: harness/run/triton_compat.py
    entry = read(Path(__file__).resolve().parent)
    side = entry.side(variant)
    where = fetch(side["package"], side["version"], entry.files, entry.pip_args)
    if "xformers" not in sys.modules:  # the package without its __init__ (which loads the C++ library)
        pkg = types.ModuleType("xformers")
        pkg.__path__ = [str(where / "xformers")]
        pkg._is_triton_available = lambda: True
        sys.modules["xformers"] = pkg
    mod = load(__file__, variant, stubs={"xformers.ops.fmha.attn_bias": {
        "BlockDiagonalCausalWithOffsetPaddedKeysMask": object}})
    _interpreter_pow(importlib.import_module("xformers.ops._triton.rope_padded_kernels"))
    return mod


def _seqinfo(seqstart, seqlen=None):
    return types.SimpleNamespace(seqstart=seqstart, seqstart_py=seqstart.tolist(), seqlen=seqlen,
                                 max_seqlen=int((seqstart[1:] - seqstart[:-1]).max()))


def _run(mod, xq, xk, xv, cache_k, cache_v, seqstartq, seqstartk, seqlenk, seqpos):
    bias = types.SimpleNamespace(q_seqinfo=_seqinfo(seqstartq), k_seqinfo=_seqinfo(seqstartk, seqlenk))
    with cuda_device_on_cpu():
        out_q = mod.rope_padded(xq, xk, xv, cache_k, cache_v, bias, theta=THETA, seqpos=seqpos,
                                adjacents=True, internal_dtype="f64")
    return torch.cat([out_q.flatten(), cache_k.flatten(), cache_v.flatten()])  # the probe compares one tensor


def launch_buggy(xq, xk, xv, cache_k, cache_v, seqstartq, seqstartk, seqlenk, seqpos):
    return _run(_mod("buggy"), xq, xk, xv, cache_k, cache_v, seqstartq, seqstartk, seqlenk, seqpos)


def launch_fixed(xq, xk, xv, cache_k, cache_v, seqstartq, seqstartk, seqlenk, seqpos):
    return _run(_mod("fixed"), xq, xk, xv, cache_k, cache_v, seqstartq, seqstartk, seqlenk, seqpos)


def make_inputs(*, device, gen, n=16, n_q_heads=4, n_kv_heads=2, dim=64, pos0=0):
    """One sequence of n new tokens at positions pos0 .. pos0 + n - 1, written into an empty cache."""
    xq = torch.randn(1, n, n_q_heads, dim, generator=gen)
    xk = torch.randn(1, n, n_kv_heads, dim, generator=gen)
    xv = torch.randn(1, n, n_kv_heads, dim, generator=gen)
    i32 = dict(dtype=torch.int32, device=device)
    return {"xq": xq.to(device), "xk": xk.to(device), "xv": xv.to(device),
            "cache_k": torch.zeros(1, n, n_kv_heads, dim, device=device),
            "cache_v": torch.zeros(1, n, n_kv_heads, dim, device=device),
            "seqstartq": torch.tensor([0, n], **i32), "seqstartk": torch.tensor([0, n], **i32),
            "seqlenk": torch.tensor([n], **i32), "seqpos": torch.arange(pos0, pos0 + n, **i32)}


def _rope(x, pos):
    dim = x.shape[-1]
    x = x.cpu().double()
    inv = THETA ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    ang = pos.cpu().double()[None, :, None, None] * inv  # (1, n, 1, dim / 2)
    re, im = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = re * ang.cos() - im * ang.sin()
    out[..., 1::2] = im * ang.cos() + re * ang.sin()
    return out


def reference(xq, xk, xv, cache_k, cache_v, seqstartq, seqstartk, seqlenk, seqpos):
    return torch.cat([_rope(xq, seqpos).flatten(), _rope(xk, seqpos).flatten(), xv.cpu().double().flatten()])
