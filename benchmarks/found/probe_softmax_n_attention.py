"""A probe file for flash-attention-softmax-n 0.3.2's ``flash_attention_n_triton``
(flash_attention_softmax_n/core/flash_attn_triton.py), called as released (never copied): a sequence of 100,
not a multiple of the kernel's 128-row blocks.

    pip download --no-deps flash-attention-softmax-n==0.3.2 -d /tmp/fa
    python -m zipfile -e /tmp/fa/flash_attention_softmax_n-0.3.2-*.whl /tmp/fa/src
    SOFTMAX_N_SRC=/tmp/fa/src python -m harness probe benchmarks/found/probe_softmax_n_attention.py \
        --backend interpreter --detectors memcheck
"""

import importlib.util
import os

import torch

ROOT = os.environ.get("SOFTMAX_N_SRC", "/tmp/fa/src")
_path = os.path.join(ROOT, "flash_attention_softmax_n", "flash_attention_softmax_n", "core", "flash_attn_triton.py")
_spec = importlib.util.spec_from_file_location("flash_attn_triton", _path)
fa = importlib.util.module_from_spec(_spec)
_empty = torch.empty
torch.empty = lambda *a, device=None, **k: _empty(*a, device="cpu" if device == "cuda" else device, **k)
try:  # the module allocates one unused tensor on "cuda" at import (line 238): on the CPU here
    _spec.loader.exec_module(fa)
finally:
    torch.empty = _empty


def launch(q, k, v):
    return fa.flash_attention_n_triton(q, k, v)


def make_inputs(*, device, gen, L=100, E=16):
    shape = (1, 2, L, E)
    return {n: torch.randn(shape, generator=gen, device=device).to(torch.float16) for n in ("q", "k", "v")}


def reference(q, k, v):
    s = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    return torch.softmax(s, dim=-1) @ v
