"""Glue for sglang-flashmla-kv-indices-page-size-32: sglang's own
create_flashmla_kv_indices_triton, launched as the TRT-LLM MLA backend's
_create_block_kv_indices launches it: one program per request, a page table prefilled
with -1 and padded the way the backend pads it (_calc_padded_blocks: a multiple of both
128 / page_size and the kernel's pages per burst), PAGED_SIZE = the KV cache page size.

Each request's tokens sit in whole pages of the KV pool, in a random order of pages; the
result is the page table, one row of page ids per request.
"""

import math

import torch
import triton

from harness.bugs.source import load

TRTLLM_BLOCK_CONSTRAINT = 128


def _mod(variant):
    return load(__file__, variant)


def _run(mod, req_to_token, req_pool_indices, seq_lens, page_size):
    if hasattr(mod, "get_num_page_per_block_flashmla"):  # the fixed version
        per_burst, extra = mod.get_num_page_per_block_flashmla(page_size), {}
    else:
        per_burst = mod.TRITON_PAD_NUM_PAGE_PER_BLOCK
        extra = {"NUM_PAGE_PER_BLOCK": mod.TRITON_PAD_NUM_PAGE_PER_BLOCK}
    blocks = triton.cdiv(req_to_token.shape[1], page_size)
    lcm = math.lcm(TRTLLM_BLOCK_CONSTRAINT // page_size, per_burst)
    max_blocks = triton.cdiv(blocks, lcm) * lcm
    bs = seq_lens.shape[0]
    block_kv_indices = torch.full((bs, max_blocks), -1, dtype=torch.int32, device=seq_lens.device)
    mod.create_flashmla_kv_indices_triton[(bs,)](
        req_to_token, req_pool_indices, seq_lens, None, block_kv_indices,
        req_to_token.stride(0), max_blocks, PAGED_SIZE=page_size, **extra,
    )
    return block_kv_indices[:, :blocks]


def launch_buggy(req_to_token, req_pool_indices, seq_lens, page_size):
    return _run(_mod("buggy"), req_to_token, req_pool_indices, seq_lens, page_size)


def launch_fixed(req_to_token, req_pool_indices, seq_lens, page_size):
    return _run(_mod("fixed"), req_to_token, req_pool_indices, seq_lens, page_size)


FUZZ = {"bs": (1, 8), "max_len": (1, 9000), "page_size": (32, 64)}


# The TRT-LLM MLA backend runs with a page size of 32 or 64 only (sglang's server_args: "TensorRT-LLM
# MLA only supports page_size of 32 or 64", any other is changed to 64), and its block padding
# (_calc_padded_blocks: 128 // page_size) is 0 past 128. Other page sizes are outside its contract:
# refused here, so shape fuzzing tries 32 and 64.
PAGE_SIZES = (32, 64)


def make_inputs(*, device, gen, bs=4, max_len=3000, page_size=64, pool_reqs=8):
    if page_size not in PAGE_SIZES:
        raise ValueError(f"page_size={page_size}: the TRT-LLM MLA backend takes {PAGE_SIZES}")
    pages_per_req = triton.cdiv(max_len, page_size)
    n_pages = pool_reqs * pages_per_req + 1
    order = torch.randperm(n_pages - 1, generator=gen) + 1  # page 0 is kept free, as the pool keeps slot 0
    req_to_token = torch.zeros(pool_reqs, pages_per_req * page_size, dtype=torch.int32)
    for r in range(pool_reqs):
        pages = order[r * pages_per_req:(r + 1) * pages_per_req]
        req_to_token[r] = (pages[:, None] * page_size + torch.arange(page_size)[None, :]).reshape(-1).to(torch.int32)
    req_pool_indices = torch.randperm(pool_reqs, generator=gen)[:bs].to(torch.int64)
    seq_lens = torch.randint(max(1, max_len // 2), max_len + 1, (bs,), generator=gen, dtype=torch.int64)
    seq_lens[0] = max_len
    return {"req_to_token": req_to_token.to(device), "req_pool_indices": req_pool_indices.to(device),
            "seq_lens": seq_lens.to(device), "page_size": page_size}


def reference(req_to_token, req_pool_indices, seq_lens, page_size):
    blocks = -(-req_to_token.shape[1] // page_size)
    out = torch.full((seq_lens.shape[0], blocks), -1, dtype=torch.int64)
    for b in range(seq_lens.shape[0]):
        n = -(-int(seq_lens[b]) // page_size)
        first_slots = req_to_token[int(req_pool_indices[b]), : n * page_size : page_size].long().cpu()
        out[b, :n] = first_slots // page_size
    return out
