"""Glue for vllm's Triton paged-decode attention (vllm/v1/attention/ops/chunked_prefill_paged_decode.py),
the path the ROCm attention backend takes when its custom kernel does not apply.

make_inputs builds a decode-only batch (one query token per sequence) over a paged KV
cache in the kernel's layout: key_cache [blocks, kv_heads, head_size // x, block_size, x],
value_cache [blocks, kv_heads, head_size, block_size]. Sequence lengths are not multiples
of the block size, so each sequence's last block has slots past seq_len that no token
wrote. tail_nan=0 fills them with ordinary numbers; tail_nan=1 with NaN, as a reused KV
block can hold. The reference is plain softmax attention over the first seq_len slots.
"""

import logging
import types

import torch
import triton
import triton.language as tl

from harness.bugs.source import load


class _Logger(logging.LoggerAdapter):
    def warning_once(self, *a, **k):
        pass

    def info_once(self, *a, **k):
        pass


_PLATFORM = types.SimpleNamespace(
    fp8_dtype=lambda: torch.float8_e4m3fn,
    is_rocm=lambda: False,
    is_cuda=lambda: True,
    has_device_capability=lambda *a, **k: True,
    get_device_capability=lambda *a, **k: (9, 0),
)

STUBS = {
    "vllm.triton_utils": {"triton": triton, "tl": tl},
    "vllm.logger": {"init_logger": lambda name: _Logger(logging.getLogger(name), {})},
    "vllm.platforms": {"current_platform": _PLATFORM},
    "vllm.platforms.rocm": {"use_rocm_custom_paged_attention": lambda *a, **k: False},
    "vllm._custom_ops": {},
}

SEQ_LENS = (37, 20, 9)


def _launch(variant, query, key_cache, value_cache, block_table, seq_lens, max_seq_len):
    mod = load(__file__, variant, stubs=STUBS)
    out = torch.empty_like(query)
    one = torch.ones(1, dtype=torch.float32, device=query.device)
    num_seqs = query.shape[0]
    mod.chunked_prefill_paged_decode(
        query=query, key=None, value=None, output=out, kv_cache_dtype="auto",
        key_cache=key_cache, value_cache=value_cache, block_table=block_table,
        query_start_loc=torch.arange(num_seqs + 1, dtype=torch.int32, device=query.device),
        seq_lens=seq_lens, max_seq_len=max_seq_len, max_query_len=1, k_scale=one, v_scale=one)
    return out


def launch_buggy(**kw):
    return _launch("buggy", **kw)


def launch_fixed(**kw):
    return _launch("fixed", **kw)


def make_inputs(*, device, gen, heads=4, kv_heads=2, head_size=64, block_size=16, tail_nan=0):
    x = 8
    blocks_per_seq = max(-(-n // block_size) for n in SEQ_LENS)
    num_blocks = blocks_per_seq * len(SEQ_LENS) + 2
    query = torch.randn(len(SEQ_LENS), heads, head_size, generator=gen).half()
    key_cache = torch.randn(num_blocks, kv_heads, head_size // x, block_size, x, generator=gen).half()
    value_cache = torch.randn(num_blocks, kv_heads, head_size, block_size, generator=gen).half()
    perm = torch.randperm(num_blocks, generator=gen)[: blocks_per_seq * len(SEQ_LENS)]
    block_table = perm.view(len(SEQ_LENS), blocks_per_seq).to(torch.int32)
    if tail_nan:
        for s, n in enumerate(SEQ_LENS):  # the unwritten slots of the last block of each sequence
            last, used = int(block_table[s, (n - 1) // block_size]), (n - 1) % block_size + 1
            key_cache[last, :, :, used:, :] = float("nan")
            value_cache[last, :, :, used:] = float("nan")
    return {
        "query": query.to(device), "key_cache": key_cache.to(device), "value_cache": value_cache.to(device),
        "block_table": block_table.to(device),
        "seq_lens": torch.tensor(SEQ_LENS, dtype=torch.int32).to(device), "max_seq_len": max(SEQ_LENS),
    }


def reference(query, key_cache, value_cache, block_table, seq_lens, max_seq_len):
    num_seqs, heads, head_size = query.shape
    kv_heads, block_size = key_cache.shape[1], key_cache.shape[3]
    group = heads // kv_heads
    out = torch.zeros_like(query)
    for s in range(num_seqs):
        n = int(seq_lens[s])
        pos = torch.arange(n)
        blocks = block_table[s].long()[pos // block_size]
        slot = pos % block_size
        k = key_cache[blocks, :, :, slot, :].reshape(n, kv_heads, head_size)  # [n, kv_heads, d]
        v = value_cache[blocks, :, :, slot]  # [n, kv_heads, d]
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scores = torch.einsum("hd,nhd->hn", query[s], k) * head_size ** -0.5
        out[s] = torch.einsum("hn,nhd->hd", scores.softmax(-1), v)
    return out


FUZZ = {"heads": (2, 8), "tail_nan": (0, 1)}
