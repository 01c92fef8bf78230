"""Glue for sglang-lora-csgmv-kernel-cache-key: sglang's own chunked_sgmv_lora_shrink_forward
(the LoRA-A "shrink" of the chunked SGMV LoRA backend) called as a decoder layer calls it:
first for one single-slice module (o_proj, input size k_first), then for another
single-slice module of the same layer (down_proj, input size k_second), with the same
batch. The two outputs are returned joined.

The kernel is wrapped in sglang's cached_triton_kernel, which keeps the compiled kernel
per key and relaunches it for any call with the same key; that cache lives in
sglang/srt/utils/common.py, taken from the same release. Its module-level imports that the
cache does not use (server, metrics and image libraries) are stubbed when they are not
installed; LoRABatchInfo is only a type annotation and is given as a plain namespace.
"""

import importlib.util
from types import SimpleNamespace

import torch

from harness.bugs.source import load

_MAYBE_MISSING = {
    "psutil": {}, "pybase64": {}, "zmq": {}, "orjson": {}, "requests": {},
    "fastapi": {}, "fastapi.responses": {"ORJSONResponse": object},
    "starlette": {}, "starlette.routing": {"Mount": object},
    "PIL": {"Image": None},
}


def _stubs():
    out = {name: attrs for name, attrs in _MAYBE_MISSING.items()
           if importlib.util.find_spec(name.split(".")[0]) is None}
    out["sglang.srt.metrics.func_timer"] = {"enable_func_timer": lambda *a, **k: None}
    out["sglang.srt.lora.utils"] = {"LoRABatchInfo": object}
    return out


def _info(seg_lens, weight_indices, lora_ranks, block_m):
    seg_indptr = torch.zeros(seg_lens.numel() + 1, dtype=torch.int32, device=seg_lens.device)
    seg_indptr[1:] = torch.cumsum(seg_lens, 0)
    n = int(seg_indptr[-1])
    return SimpleNamespace(bs=seg_lens.numel(), num_segments=seg_lens.numel(), max_len=block_m,
                           seg_lens=seg_lens, seg_indptr=seg_indptr, weight_indices=weight_indices,
                           lora_ranks=lora_ranks, scalings=None, use_cuda_graph=False,
                           permutation=torch.arange(n, dtype=torch.int32, device=seg_lens.device))


def _load(variant):
    """The module; under the interpreter triton.jit gives an InterpretedFunction, which the
    cache's isinstance(fn, JITFunction) check refuses, so the check is widened while the module
    is imported (on a GPU it sees a JITFunction: nothing is widened there, JITFunction is
    subclassed at import and must stay a class)."""
    import os

    if os.environ.get("TRITON_INTERPRET") != "1":
        return load(__file__, variant, stubs=_stubs())
    import triton.runtime.jit as jit
    from triton.runtime.interpreter import InterpretedFunction

    real = jit.JITFunction
    jit.JITFunction = (real, InterpretedFunction)
    try:
        return load(__file__, variant, stubs=_stubs())
    finally:
        jit.JITFunction = real


def _run(variant, x1, w1, x2, w2, seg_lens, weight_indices, lora_ranks, block_m):
    mod = _load(variant)
    info = _info(seg_lens, weight_indices, lora_ranks, block_m)
    out1 = mod.chunked_sgmv_lora_shrink_forward(x1, w1, info, num_slices=1)  # o_proj
    out2 = mod.chunked_sgmv_lora_shrink_forward(x2, w2, info, num_slices=1)  # down_proj
    return torch.cat([out1.reshape(-1), out2.reshape(-1)])


def launch_buggy(x1, w1, x2, w2, seg_lens, weight_indices, lora_ranks, block_m):
    return _run("buggy", x1, w1, x2, w2, seg_lens, weight_indices, lora_ranks, block_m)


def launch_fixed(x1, w1, x2, w2, seg_lens, weight_indices, lora_ranks, block_m):
    return _run("fixed", x1, w1, x2, w2, seg_lens, weight_indices, lora_ranks, block_m)


def make_inputs(*, device, gen, segments=3, k_first=512, k_second=512, rank=16, num_lora=2):
    dt = torch.float16
    block_m = 16  # the backend's chunk size: every segment holds at most this many tokens
    lens = torch.tensor([1 + (7 * i + 5) % block_m for i in range(segments)], dtype=torch.int32)
    s = int(lens.sum())
    x1 = (torch.randn(s, k_first, generator=gen) * 0.1).to(dt)
    w1 = (torch.randn(num_lora, rank, k_first, generator=gen) * 0.1).to(dt)
    x2 = (torch.randn(s, k_second, generator=gen) * 0.1).to(dt)
    w2 = (torch.randn(num_lora, rank, k_second, generator=gen) * 0.1).to(dt)
    weight_indices = (torch.arange(segments) % num_lora).to(torch.int32)
    lora_ranks = torch.full((num_lora,), rank, dtype=torch.int32)
    return {"x1": x1.to(device), "w1": w1.to(device), "x2": x2.to(device), "w2": w2.to(device),
            "seg_lens": lens.to(device), "weight_indices": weight_indices.to(device),
            "lora_ranks": lora_ranks.to(device), "block_m": block_m}


def reference(x1, w1, x2, w2, seg_lens, weight_indices, lora_ranks, block_m):
    """out[seg] = x[seg] @ W[adapter(seg)].T for each of the two modules."""
    def shrink(x, w):
        out = torch.zeros(x.shape[0], w.shape[1], dtype=torch.float64)
        start = 0
        for i, n in enumerate(seg_lens.tolist()):
            a = int(weight_indices[i])
            out[start:start + n] = x[start:start + n].to(torch.float64) @ w[a].to(torch.float64).T
            start += n
        return out
    return torch.cat([shrink(x1, w1).reshape(-1), shrink(x2, w2).reshape(-1)])


FUZZ = {"segments": (1, 8)}
