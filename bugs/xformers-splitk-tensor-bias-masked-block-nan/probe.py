"""Glue for xformers' split-K attention, xformers/ops/fmha/triton_splitk.py: its operator
FwOp.apply(Inputs(query, key, value, attn_bias), needs_gradient=False), the call
xformers.ops.memory_efficient_attention_forward(q, k, v, attn_bias, op=triton_splitk.FwOp) makes
after its dispatch checks (which accept only CUDA tensors, so they are left out: the glue calls the
operator the dispatcher would pick). With a torch.Tensor attn_bias the operator runs one split
(split_k = 1) over all keys, the kernel adding the bias to each score.

xformers' package __init__ (which loads its C++ library) is not run: the package is made here with
the one function the module asks of it, _is_triton_available, and xformers._cpp_lib with
_built_with_cuda; the rest of the imports are the package's own files. Under the interpreter (no
CUDA) the launcher's question of the device's compute capability (0.0.28 picks warps and BLOCK_M by
it for K = 128) is answered (8, 0), an A100's: the generic launch; on a GPU nothing is changed."""

import contextlib
import os
import sys
import types
from pathlib import Path
from unittest import mock

import torch

from harness.bugs.manifest import read
from harness.bugs.source import fetch, load


def _mod(variant):
    # xformers' own switch for tools (0.0.28 on): the kernels unroll_varargs makes are compiled from a
    # file written to a temporary folder, not from an in-memory "<unroll_varargs-...>" source, so that
    # a tool can read them (the probe counts a launched kernel by its file). Their code is unchanged.
    os.environ.setdefault("XFORMERS_MATERIALIZE_CODEGEN", "1")
    entry = read(Path(__file__).resolve().parent)
    side = entry.side(variant)
    where = fetch(side["package"], side["version"], entry.files, entry.pip_args)
    if "xformers" not in sys.modules:  # the package without its __init__ (which loads the C++ library)
        pkg = types.ModuleType("xformers")
        pkg.__path__ = [str(where / "xformers")]
        pkg._is_triton_available = lambda: True
        sys.modules["xformers"] = pkg
    return load(__file__, variant, stubs={"xformers._cpp_lib": {"_built_with_cuda": True}})


def _run(variant, q, k, v, bias):
    mod = _mod(variant)
    common = sys.modules["xformers.ops.fmha.common"]
    no_cuda = not torch.cuda.is_available()
    with mock.patch.object(torch.cuda, "get_device_capability", lambda *_a, **_k: (8, 0)) if no_cuda \
            else contextlib.nullcontext():
        out, _ = mod.FwOp.apply(common.Inputs(query=q, key=k, value=v, attn_bias=bias), needs_gradient=False)
    return out


def launch_buggy(q, k, v, bias):
    return _run("buggy", q, k, v, bias)


def launch_fixed(q, k, v, bias):
    return _run("fixed", q, k, v, bias)


def make_inputs(*, device, gen, batch=1, mq=8, mkv=1025, heads=1, dim=128, masked=0):
    """Attention as xformers' tests/test_mem_eff_attention.py runs the split-K operator: fp16
    queries, keys and values randn * 3 of shape (B, M, H, K) (shapes_triton_splitk: (B, Mq, Mkv, H,
    K) from (2, 3, 73, 1, 128) to (10, 15, 2**16, 1, 128); the defaults are its (1, 8, 1025, 1, 128))
    and a torch.Tensor attn_bias of shape (B, H, Mq, Mkv), randn * 3 as the tests make a tensor bias.
    ``masked`` keys at the start of every row get -inf (a left-padded batch: keys no query may
    attend to), the rest of the row its random bias."""
    q = (torch.randn(batch, mq, heads, dim, generator=gen) * 3).to(torch.float16)
    k = (torch.randn(batch, mkv, heads, dim, generator=gen) * 3).to(torch.float16)
    v = (torch.randn(batch, mkv, heads, dim, generator=gen) * 3).to(torch.float16)
    bias = torch.randn(batch, heads, mq, mkv, generator=gen) * 3
    if masked:
        bias[..., : min(masked, mkv - 1)] = float("-inf")
    return {"q": q.to(device), "k": k.to(device), "v": v.to(device), "bias": bias.to(torch.float16).to(device)}


def reference(q, k, v, bias):
    """softmax(q k^T / sqrt(K) + bias) v per batch and head: a key with bias -inf gets weight 0."""
    qh, kh, vh = (t.double().permute(0, 2, 1, 3) for t in (q, k, v))
    scores = qh @ kh.transpose(-1, -2) / q.shape[-1] ** 0.5 + bias.double()
    return (torch.softmax(scores, dim=-1) @ vh).permute(0, 2, 1, 3)


FUZZ = {"batch": (1, 10), "mq": (1, 16), "mkv": (1, 7328)}
