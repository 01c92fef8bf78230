"""Glue for vllm's Triton paged decode attention (vllm/v1/attention/ops/triton_decode_attention.py),
the kernel behind the TRITON_MLA backend, called through its launcher decode_attention_fwd.

make_inputs builds one paged KV buffer [num_pages, page_size, heads, head_dim] (used as
both K and V, as MLA shares the latent cache) and a req_to_token table of page numbers.
high_pages=1 takes each sequence's pages from the top of the buffer. With a buffer of
more than 2**31 elements (the GPU sizes: 1.1 M pages of 16 x 1 x 128 fp16, 4.5 GB)
page_number * page_stride passes 2**31; at the small interpreter sizes it does not, and
both versions agree there. The reference is plain softmax attention over each
sequence's seq_len tokens.
"""

import logging
import types

import torch
import triton
import triton.language as tl

from harness.bugs.source import load

_PLATFORM = types.SimpleNamespace(is_rocm=lambda: False, is_cuda=lambda: True,
                                  fp8_dtype=lambda: torch.float8_e4m3fn)

STUBS = {
    "vllm.triton_utils": {"triton": triton, "tl": tl},
    "vllm.platforms": {"current_platform": _PLATFORM},
}

NUM_KV_SPLITS = 4


def _launch(variant, q, kv_buffer, req_to_token, seq_lens):
    mod = load(__file__, variant, stubs=STUBS)
    batch, heads, head_dim = q.shape
    o = torch.empty_like(q)
    lse = torch.empty(batch, heads, dtype=torch.float32, device=q.device)
    attn_logits = torch.empty(batch, heads, NUM_KV_SPLITS, head_dim + 1, dtype=torch.float32, device=q.device)
    mod.decode_attention_fwd(q, kv_buffer, kv_buffer, o, lse, req_to_token, seq_lens, attn_logits,
                             NUM_KV_SPLITS, head_dim ** -0.5, page_size=kv_buffer.shape[1])
    return o


def launch_buggy(q, kv_buffer, req_to_token, seq_lens):
    return _launch("buggy", q, kv_buffer, req_to_token, seq_lens)


def launch_fixed(q, kv_buffer, req_to_token, seq_lens):
    return _launch("fixed", q, kv_buffer, req_to_token, seq_lens)


def make_inputs(*, device, gen, batch=3, heads=4, head_dim=64, page_size=16, seq_len=40, num_pages=64,
                high_pages=0):
    pages_per_seq = -(-seq_len // page_size)
    used = batch * pages_per_seq
    assert used <= num_pages
    if high_pages:  # the top pages of the buffer
        pages = num_pages - used + torch.randperm(used, generator=gen)
    else:
        pages = torch.randperm(num_pages, generator=gen)[:used]
    req_to_token = pages.view(batch, pages_per_seq).to(torch.int32)
    kv_buffer = torch.zeros(num_pages, page_size, heads, head_dim, dtype=torch.float16, device=device)
    kv_buffer[pages.to(device)] = torch.randn(used, page_size, heads, head_dim, generator=gen).half().to(device)
    q = torch.randn(batch, heads, head_dim, generator=gen).half()
    # a decode sequence holds at least its new token: lengths >= 1 (erratum, bugs/split.toml)
    lens = torch.randint(max(1, seq_len - page_size + 1), seq_len + 1, (batch,), generator=gen, dtype=torch.int32)
    return {"q": q.to(device), "kv_buffer": kv_buffer, "req_to_token": req_to_token.to(device),
            "seq_lens": lens.to(device)}


def reference(q, kv_buffer, req_to_token, seq_lens):
    batch, heads, head_dim = q.shape
    page_size = kv_buffer.shape[1]
    out = torch.zeros_like(q)
    for b in range(batch):
        n = int(seq_lens[b])
        pos = torch.arange(n, device=req_to_token.device)
        kv = kv_buffer[req_to_token[b].long()[pos // page_size], pos % page_size]  # [n, heads, d]
        scores = torch.einsum("hd,nhd->hn", q[b], kv) * head_dim ** -0.5
        out[b] = torch.einsum("hn,nhd->hd", scores.softmax(-1), kv)
    return out


GPU_SIZES = {"batch": 3, "heads": 1, "head_dim": 128, "page_size": 16, "seq_len": 40, "num_pages": 1_100_000,
             "high_pages": 1}
FUZZ = {"batch": (1, 6), "seq_len": (1, 200), "high_pages": (0, 1)}
# the scores are fp16 products (q[None, :] * k, each rounded before tl.sum): errors of about 1e-3 in
# the logits, and so in the output, against float64, in both versions (1.5e-3 on one element of 576
# measured on an H100: the GPU board's row for the fixed version)
TOLERANCE = {"rtol": 1e-2, "atol": 1e-2}
