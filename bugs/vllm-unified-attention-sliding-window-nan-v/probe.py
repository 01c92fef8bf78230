"""Glue for vllm's Triton unified attention (0.13.0: vllm/attention/ops/triton_unified_attention.py,
0.14.0: vllm/v1/attention/ops/triton_unified_attention.py) with a sliding window: its own launcher
unified_attention(...), called as vllm's tests/kernels/attention/test_triton_unified_attention.py
calls it (window_size = (sliding_window - 1, 0), causal, no 3D split: the 2D kernel), over a paged
KV cache and a block table.

The module's imports that the kernel does not need (vllm's logger, platform object and Triton
re-export) are stood in for here: the platform answers what a CUDA platform answers (fp8 e4m3fn)."""

import logging
import types

import torch
import triton
import triton.language as tl

from harness.bugs.source import load

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
    "vllm.platforms": {"current_platform": _PLATFORM},
}

# (query tokens, kv tokens) per sequence: the first seq_lens of vllm's test_triton_unified_attn
SEQS = ((1, 1328), (5, 18), (129, 463))


def _launch(variant, q, k_cache, v_cache, block_table, cu_seqlens_q, seqused_k, max_seqlen_q,
            max_seqlen_k, window):
    mod = load(__file__, variant, stubs=STUBS)
    out = torch.empty_like(q)
    one = torch.ones(1, dtype=torch.float32, device=q.device)
    mod.unified_attention(
        q=q, k=k_cache, v=v_cache, out=out, cu_seqlens_q=cu_seqlens_q, max_seqlen_q=max_seqlen_q,
        seqused_k=seqused_k, max_seqlen_k=max_seqlen_k, softmax_scale=q.shape[-1] ** -0.5, causal=True,
        window_size=(window - 1, 0), block_table=block_table, softcap=0.0, q_descale=None,
        k_descale=one, v_descale=one)
    return out


def launch_buggy(**kw):
    return _launch("buggy", **kw)


def launch_fixed(**kw):
    return _launch("fixed", **kw)


def make_inputs(*, device, gen, heads=4, kv_heads=4, head_size=128, block_size=16, num_blocks=2048,
                window=64, stale=0):
    """As test_triton_unified_attn makes them: bf16 query randn (sum of query tokens, heads,
    head_size), key and value caches randn (num_blocks, block_size, kv_heads, head_size), a random
    block table (blocks drawn from 1..num_blocks-1 here, 0 being the null block) and a sliding window
    (the test's 64; 128 and 256 too). ``stale=1``: a sequence's blocks that hold only keys no query of
    it may attend to (wholly before its first query's window) are freed, as vLLM's sliding-window KV
    cache manager frees them: their block-table entries become the null block 0, whose K and V hold
    NaN (memory another request or nothing has written)."""
    num_tokens = sum(n for n, _ in SEQS)
    max_blocks = max(-(-kv // block_size) for _, kv in SEQS)
    q = torch.randn(num_tokens, heads, head_size, generator=gen).to(torch.bfloat16)
    k_cache = torch.randn(num_blocks, block_size, kv_heads, head_size, generator=gen).to(torch.bfloat16)
    v_cache = torch.randn(num_blocks, block_size, kv_heads, head_size, generator=gen).to(torch.bfloat16)
    block_table = torch.randint(1, num_blocks, (len(SEQS), max_blocks), generator=gen, dtype=torch.int32)
    if stale:
        k_cache[0] = float("nan")
        v_cache[0] = float("nan")
        for s, (n, kv) in enumerate(SEQS):
            first_needed = max(kv - n - window + 1, 0)  # the first query's window starts here
            block_table[s, : first_needed // block_size] = 0
    cu = [0]
    for n, _ in SEQS:
        cu.append(cu[-1] + n)
    return {
        "q": q.to(device), "k_cache": k_cache.to(device), "v_cache": v_cache.to(device),
        "block_table": block_table.to(device),
        "cu_seqlens_q": torch.tensor(cu, dtype=torch.int32).to(device),
        "seqused_k": torch.tensor([kv for _, kv in SEQS], dtype=torch.int32).to(device),
        "max_seqlen_q": max(n for n, _ in SEQS), "max_seqlen_k": max(kv for _, kv in SEQS),
        "window": window,
    }


def reference(q, k_cache, v_cache, block_table, cu_seqlens_q, seqused_k, max_seqlen_q, max_seqlen_k, window):
    """Causal paged attention with a sliding window, as the test's ref_paged_attn: query i of a
    sequence with kv_len keys and n queries attends to keys kv_len - n + i - window + 1 .. kv_len - n + i;
    keys outside the window are never read."""
    heads, head_size = q.shape[1], q.shape[2]
    block_size, kv_heads = k_cache.shape[1], k_cache.shape[2]
    group = heads // kv_heads
    out = torch.zeros_like(q)
    for s in range(block_table.shape[0]):
        q0, q1 = int(cu_seqlens_q[s]), int(cu_seqlens_q[s + 1])
        n, total = q1 - q0, int(seqused_k[s])
        ctx = total - n
        lo = max(ctx - window + 1, 0)  # no key before this is in any query's window
        pos = torch.arange(lo, total, device=q.device)
        blocks = block_table[s].long()[pos // block_size]
        k = k_cache[blocks, pos % block_size].repeat_interleave(group, dim=1)
        v = v_cache[blocks, pos % block_size].repeat_interleave(group, dim=1)
        scores = torch.einsum("qhd,khd->hqk", q[q0:q1], k) * head_size ** -0.5
        qpos = ctx + torch.arange(n, device=q.device)
        allowed = (pos[None, :] <= qpos[:, None]) & (pos[None, :] > qpos[:, None] - window)
        scores = scores.masked_fill(~allowed, float("-inf"))
        out[q0:q1] = torch.einsum("hqk,khd->qhd", scores.softmax(-1), v)
    return out


FUZZ = {"heads": (1, 8), "window": (1, 256)}
