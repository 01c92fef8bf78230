"""Glue for vllm's Triton prefix-prefill attention, vllm/attention/ops/prefix_prefill.py:
context_attention_fwd(q, k, v, o, k_cache, v_cache, b_loc, b_start_loc, b_seq_len, b_ctx_len,
max_input_len), the kernel the xformers backend ran (PagedAttention.forward_prefix) when part of a
prompt was already in the paged KV cache (prefix caching, chunked prefill).

make_inputs builds a batch as the package's own test (tests/kernels/test_prefix_prefill.py,
test_contexted_kv_attention) builds it: each sequence has a cached context of ctx_len tokens, held in
randomly permuted cache blocks, and query_len new tokens (the last sequence is a decode, one token);
the new tokens attend to the whole context and causally to each other. The K cache has vllm's paged
layout [num_blocks, kv_heads, head_size // x, block_size, x] with x = 16 // element_size, the factor
PagedAttention.split_kv_cache uses for the caches it hands to this function (8 for fp16, which is
also what the test's hard-coded 8 gives; 4 for fp32); the V cache is [num_blocks, kv_heads,
head_size, block_size]. The reference is plain softmax attention in float64 over the same keys and
values, read back from the caches at the layout they were written in.

Only prefix_prefill.py is taken from the package; ``vllm.platforms.current_platform``, which it asks
for the device's compute capability (to pick its block size), is given as a stand-in that answers
with the real device's capability, or (8, 0) where there is no GPU."""

import types

import torch

from harness.bugs.source import load


def _capability():
    if torch.cuda.is_available():
        return torch.cuda.get_device_capability()
    return (8, 0)


# The kernel's tl.dot calls keep Triton's default precision, which for fp32 operands on a GPU is TF32
# (10-bit mantissas, 2**-11 relative): with the trigger's fp32 standard-normal values the scores and
# the weighted sum of values of a correct kernel are off by about 1e-3 against float64, past fp32's
# own tolerance, so the comparison allows 1e-2 (the bug's error is of order 1).
TOLERANCE = {"rtol": 1e-2, "atol": 1e-2}

STUBS = {"vllm.platforms": {"current_platform": types.SimpleNamespace(get_device_capability=_capability)}}


def _launch(variant, q, k, v, k_cache, v_cache, block_table, b_start_loc, b_seq_len, b_ctx_len):
    mod = load(__file__, variant, stubs=STUBS)
    o = torch.empty_like(q)
    query_lens = b_seq_len - b_ctx_len
    mod.context_attention_fwd(q, k, v, o, k_cache, v_cache, block_table, b_start_loc, b_seq_len,
                              b_ctx_len, int(query_lens.max()))
    return o


def launch_buggy(**kw):
    return _launch("buggy", **kw)


def launch_fixed(**kw):
    return _launch("fixed", **kw)


def make_inputs(*, device, gen, batch=3, heads=8, queries_per_kv=8, head_size=128, block_size=32,
                max_len=64, fp32=0, unit=0):
    """The test's batch, scaled down: batch sequences (the test's 10), query and context lengths
    drawn from 16..max_len (the test's 16..1024), the last sequence a one-token decode, num_heads
    8 with 8 queries per KV head (the test's 64 heads with 1, 8 or 64), head_size 128 (the test's
    128, 96 or 24), block_size 32, fp16 values uniform in (-1e-3, 1e-3) as the test draws them.
    Given the trigger: fp32=1 makes the model's dtype fp32 (so vllm's cache layout has x = 4) and
    unit=1 draws the values from a standard normal instead of the test's (-1e-3, 1e-3), where
    attention weights are nearly uniform whatever keys are read."""
    dtype = torch.float32 if fp32 else torch.float16
    kv_heads = max(1, heads // queries_per_kv)
    lo = min(16, max_len)
    query_lens = [int(torch.randint(lo, max_len + 1, (1,), generator=gen)) for _ in range(batch)]
    query_lens[-1] = 1
    ctx_lens = [int(torch.randint(lo, max_len + 1, (1,), generator=gen)) for _ in range(batch)]

    def values(*shape):
        t = torch.randn(*shape, generator=gen) if unit else torch.rand(*shape, generator=gen) * 2e-3 - 1e-3
        return t.to(dtype)

    blocks_per_seq = max(-(-c // block_size) for c in ctx_lens)
    num_blocks = blocks_per_seq * batch + 2
    block_table = torch.randperm(num_blocks, generator=gen)[: blocks_per_seq * batch].view(batch, blocks_per_seq)
    k_flat = torch.zeros(num_blocks, block_size, kv_heads, head_size, dtype=dtype)
    v_flat = torch.zeros(num_blocks, block_size, kv_heads, head_size, dtype=dtype)
    for b, c in enumerate(ctx_lens):
        for t in range(c):
            k_flat[block_table[b, t // block_size], t % block_size] = values(kv_heads, head_size)
            v_flat[block_table[b, t // block_size], t % block_size] = values(kv_heads, head_size)
    x = 16 // torch.empty((), dtype=dtype).element_size()  # vllm's PagedAttention.split_kv_cache
    k_cache = k_flat.view(num_blocks, block_size, kv_heads, head_size // x, x).permute(0, 2, 3, 1, 4).contiguous()
    v_cache = v_flat.permute(0, 2, 3, 1).contiguous()
    tokens = sum(query_lens)
    seq_lens = [a + b for a, b in zip(query_lens, ctx_lens)]
    inputs = {
        "q": values(tokens, heads, head_size),
        "k": values(tokens, kv_heads, head_size),
        "v": values(tokens, kv_heads, head_size),
        "k_cache": k_cache,
        "v_cache": v_cache,
        "block_table": block_table.to(torch.long),
        "b_start_loc": torch.cumsum(torch.tensor([0] + query_lens, dtype=torch.long), 0),
        "b_seq_len": torch.tensor(seq_lens, dtype=torch.long),
        "b_ctx_len": torch.tensor(ctx_lens, dtype=torch.long),
    }
    return {name: t.to(device) for name, t in inputs.items()}


def reference(q, k, v, k_cache, v_cache, block_table, b_start_loc, b_seq_len, b_ctx_len):
    """Softmax attention in float64: the new tokens of each sequence attend to all its cached
    context and causally to each other, scaled by 1/sqrt(head_size)."""
    heads, head_size = q.shape[1], q.shape[2]
    kv_heads, block_size, x = k_cache.shape[1], k_cache.shape[3], k_cache.shape[4]
    group = heads // kv_heads
    k_flat = k_cache.double().permute(0, 3, 1, 2, 4).reshape(k_cache.shape[0], block_size, kv_heads, head_size)
    v_flat = v_cache.double().permute(0, 3, 1, 2)
    out = torch.zeros(q.shape, dtype=torch.float64, device=q.device)
    for b in range(b_seq_len.shape[0]):
        ctx, start = int(b_ctx_len[b]), int(b_start_loc[b])
        qlen = int(b_seq_len[b]) - ctx
        pos = torch.arange(ctx, device=q.device)
        blocks = block_table[b, pos // block_size]
        keys = torch.cat([k_flat[blocks, pos % block_size], k[start:start + qlen].double()])
        vals = torch.cat([v_flat[blocks, pos % block_size], v[start:start + qlen].double()])
        keys = keys.repeat_interleave(group, dim=1)  # [ctx + qlen, heads, d]
        vals = vals.repeat_interleave(group, dim=1)
        qq = q[start:start + qlen].double()
        scores = torch.einsum("qhd,khd->hqk", qq, keys) / head_size ** 0.5
        allowed = torch.arange(ctx + qlen, device=q.device)[None, :] <= (ctx + torch.arange(qlen, device=q.device))[:, None]
        scores = scores.masked_fill(~allowed[None], float("-inf"))
        out[start:start + qlen] = torch.einsum("hqk,khd->qhd", scores.softmax(-1), vals)
    return out.to(q.dtype)


FUZZ = {"batch": (1, 10), "max_len": (16, 128)}
