"""Glue for vllm's Triton unified attention (vllm/v1/attention/ops/triton_unified_attention.py)
with logit soft-capping, the Gemma-2 style score = softcap * tanh(score / softcap).

make_inputs builds a small paged KV cache (two sequences, each with cached context and
several new query tokens) and scales q by `qscale`: at qscale=1 the scores are O(1);
at a few thousand some scores pass 88 * softcap, where exp(score / softcap) overflows
float32. The reference is causal paged attention with the soft-cap, in plain torch.
"""

import enum
import logging
import types

import torch
import triton
import triton.language as tl

from harness.bugs.source import load


class _KVQuantMode(enum.IntEnum):  # the values of vllm.v1.kv_cache_interface.KVQuantMode
    NONE = 0
    FP8_PER_TENSOR = 1
    INT8_PER_TOKEN_HEAD = 2
    FP8_PER_TOKEN_HEAD = 3
    INT4_PER_TOKEN_HEAD = 4
    NVFP4 = 5


_PLATFORM = types.SimpleNamespace(
    fp8_dtype=lambda: torch.float8_e4m3fn,
    is_device_capability_family=lambda *a, **k: False,
    is_device_capability=lambda *a, **k: False,
    is_rocm=lambda: False,
    is_cuda=lambda: True,
    is_xpu=lambda: False,
)

STUBS = {
    "vllm.triton_utils": {"triton": triton, "tl": tl},
    "vllm.logger": {"init_logger": logging.getLogger},
    "vllm.envs": {"VLLM_BATCH_INVARIANT": False},
    "vllm.platforms": {"current_platform": _PLATFORM},
    "vllm.v1.kv_cache_interface": {"KVQuantMode": _KVQuantMode},
}

# fp16 attention: the tolerance of vllm's own unified-attention test (P is rounded to fp16
# before the PV product, which sharp soft-capped rows make visible)
TOLERANCE = {"rtol": 1e-2, "atol": 1.5e-2}

SEQS = ((5, 7), (9, 4))  # (cached context tokens, new query tokens) per sequence


def _launch(variant, q, k_cache, v_cache, block_table, cu_seqlens_q, seqused_k,
            max_seqlen_q, max_seqlen_k, softcap):
    mod = load(__file__, variant, stubs=STUBS)
    out = torch.empty_like(q)
    one = torch.ones(1, dtype=torch.float32, device=q.device)
    mod.unified_attention(
        q=q, k=k_cache, v=v_cache, out=out, cu_seqlens_q=cu_seqlens_q,
        max_seqlen_q=max_seqlen_q, seqused_k=seqused_k, max_seqlen_k=max_seqlen_k,
        softmax_scale=q.shape[-1] ** -0.5, causal=True, window_size=(-1, -1),
        block_table=block_table, softcap=float(softcap), q_descale=None,
        k_descale=one, v_descale=one)
    return out


def launch_buggy(**kw):
    return _launch("buggy", **kw)


def launch_fixed(**kw):
    return _launch("fixed", **kw)


def make_inputs(*, device, gen, heads=4, kv_heads=2, head_size=64, block_size=16, qscale=1, softcap=50):
    num_tokens = sum(n for _, n in SEQS)
    blocks_per_seq = max(-(-(c + n) // block_size) for c, n in SEQS)
    num_blocks = blocks_per_seq * len(SEQS) + 1
    q = (torch.randn(num_tokens, heads, head_size, generator=gen) * qscale).half()
    k_cache = torch.randn(num_blocks, block_size, kv_heads, head_size, generator=gen).half()
    v_cache = torch.randn(num_blocks, block_size, kv_heads, head_size, generator=gen).half()
    perm = torch.randperm(num_blocks - 1, generator=gen)[: blocks_per_seq * len(SEQS)] + 1
    block_table = perm.view(len(SEQS), blocks_per_seq).to(torch.int32)
    cu = [0]
    for _, n in SEQS:
        cu.append(cu[-1] + n)
    return {
        "q": q.to(device), "k_cache": k_cache.to(device), "v_cache": v_cache.to(device),
        "block_table": block_table.to(device),
        "cu_seqlens_q": torch.tensor(cu, dtype=torch.int32).to(device),
        "seqused_k": torch.tensor([c + n for c, n in SEQS], dtype=torch.int32).to(device),
        "max_seqlen_q": max(n for _, n in SEQS), "max_seqlen_k": max(c + n for c, n in SEQS),
        "softcap": softcap,
    }


def reference(q, k_cache, v_cache, block_table, cu_seqlens_q, seqused_k, max_seqlen_q, max_seqlen_k, softcap):
    heads, head_size = q.shape[1], q.shape[2]
    block_size, kv_heads = k_cache.shape[1], k_cache.shape[2]
    group = heads // kv_heads
    out = torch.zeros_like(q)
    for s in range(block_table.shape[0]):
        q0, q1 = int(cu_seqlens_q[s]), int(cu_seqlens_q[s + 1])
        n, total = q1 - q0, int(seqused_k[s])
        ctx = total - n
        pos = torch.arange(total, device=q.device)
        blocks = block_table[s].long()[pos // block_size]
        k = k_cache[blocks, pos % block_size].repeat_interleave(group, dim=1)  # [total, heads, d]
        v = v_cache[blocks, pos % block_size].repeat_interleave(group, dim=1)
        scores = torch.einsum("qhd,khd->hqk", q[q0:q1], k) * head_size ** -0.5
        if softcap > 0:
            scores = softcap * torch.tanh(scores / softcap)
        allowed = pos[None, :] <= (ctx + torch.arange(n, device=q.device))[:, None]
        scores = scores.masked_fill(~allowed, float("-inf"))
        out[q0:q1] = torch.einsum("hqk,khd->qhd", scores.softmax(-1), v)
    return out


FUZZ = {"heads": (2, 8), "qscale": (1, 5000)}
