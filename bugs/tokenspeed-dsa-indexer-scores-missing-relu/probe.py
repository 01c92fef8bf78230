"""Glue for tokenspeed-kernel's Triton DSA indexer (the lightning indexer of DeepSeek Sparse Attention):
dsa_prefill_topk_fp8, in tokenspeed_kernel/ops/attention/triton/dsa_topk.py (0.1.3) and
tokenspeed_kernel/ops/attention/dsa/_triton/topk.py (0.1.4).

The launcher takes the indexer's queries q (tokens, heads, 128) in bf16, the per-head weights (tokens, heads)
in float32, the paged FP8 index-key cache (slots, 128 + 4 bytes: each page of 64 slots holds its 64 x 128
e4m3 keys, then one float32 scale per slot and 128-wide group), the workspace's slot of each candidate
row, and each token's candidate rows [row_start, row_end). It launches _dsa_prefill_logits_fp8_kernel on
(tokens, cdiv(rows, 64)) programs to score every (token, row): softmax_scale * sum over heads of
w[t, h] * ReLU(q[t, h] . k[slot]) (0.1.4; 0.1.3 leaves the ReLU out), -inf outside the token's range; then
hands those logits to _topk_with_padding and returns the top-k rows and their count.

The glue calls each version's own dsa_prefill_topk_fp8, with the upstream test's topk (512) and
softmax_scale (128 ** -0.5), and returns the logits the launcher hands to its top-k (captured by wrapping
the module's _topk_with_padding, which still runs): a score, not the top-k indices, because which of two
near-equal scores a top-k keeps is rounding, where a set of indices compared with a float64 reference's
would differ for that reason alone. Under the interpreter the launcher's "requires CUDA tensors" check is
answered by handing it q as a tensor subclass whose is_cuda is True (its data stays on the CPU); where CUDA
is available q goes as it is. The package's tokenspeed_kernel._triton (which imports tokenspeed's own
Triton fork, tokenspeed_triton) is stubbed with triton and triton.language, and its platform, registry and
signature modules, used only to register the kernels with the package's dispatcher, with stand-ins.
"""

import types

import torch
import triton
import triton.language as tl

from harness.bugs.source import load

PAGE_SIZE = 64  # the upstream tests' page size (the only one the package registers for DSA)
HEAD_DIM = 128  # the indexer's head dim (the launcher requires a multiple of 128)
TOPK = 512  # the upstream prefill test's topk
SOFTMAX_SCALE = HEAD_DIM ** -0.5  # as the upstream test passes it
SLOT_OFFSET = 17  # the upstream test's workspace slots: arange(rows) + 17


class _Platform:
    is_nvidia = True


STUBS = {
    "tokenspeed_kernel._triton": {"tl": tl, "triton": triton},
    "tokenspeed_kernel.platform": {"current_platform": lambda: _Platform(),
                                   "CapabilityRequirement": lambda *a, **k: None},
    "tokenspeed_kernel.registry": {"Priority": types.SimpleNamespace(PORTABLE=0),
                                   "register_kernel": lambda *a, **k: (lambda f: f)},
    "tokenspeed_kernel.signature": {"dense_tensor_format": lambda *a, **k: None,
                                    "format_signature": lambda *a, **k: None},
}


class _CudaForTheCheck(torch.Tensor):
    """q as the launcher's CUDA check wants it, under the interpreter (CPU data)."""

    @property
    def is_cuda(self):
        return True


def _run(variant, q, weights, index_k_cache, kv_workspace_slots, row_starts, row_ends):
    mod = load(__file__, variant, stubs=STUBS)
    captured = []
    topk_with_padding = mod._topk_with_padding

    def _capture(logits, topk, *args, **kwargs):
        captured.append(logits.as_subclass(torch.Tensor).clone())
        return topk_with_padding(logits, topk, *args, **kwargs)

    mod._topk_with_padding = _capture
    try:
        q_in = q if q.is_cuda else q.as_subclass(_CudaForTheCheck)
        mod.dsa_prefill_topk_fp8(q_in, index_k_cache, weights, kv_workspace_slots, row_starts, row_ends,
                                 page_size=PAGE_SIZE, topk=TOPK, softmax_scale=SOFTMAX_SCALE)
    finally:
        mod._topk_with_padding = topk_with_padding
    return torch.cat(captured, dim=0)


def launch_buggy(q, weights, index_k_cache, kv_workspace_slots, row_starts, row_ends):
    return _run("buggy", q, weights, index_k_cache, kv_workspace_slots, row_starts, row_ends)


def launch_fixed(q, weights, index_k_cache, kv_workspace_slots, row_starts, row_ends):
    return _run("fixed", q, weights, index_k_cache, kv_workspace_slots, row_starts, row_ends)


def _pack(index_k):
    """The upstream test's _pack_index_k_cache, written here: per 128-wide group an absmax / 448 scale, the
    keys cast to e4m3, laid out page by page (the page's keys, then its scales). CPU tensors."""
    slots = index_k.shape[0]
    groups = HEAD_DIM // 128
    row_bytes = HEAD_DIM + groups * 4
    pages = slots // PAGE_SIZE
    x = index_k.float().reshape(slots, groups, 128)
    scale = x.abs().amax(dim=-1, keepdim=True).clamp_min(1.0e-6) / 448.0
    x_fp8 = (x / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    packed = torch.empty((slots, row_bytes), dtype=torch.uint8)
    flat = packed.reshape(-1)
    page_bytes = PAGE_SIZE * row_bytes
    keys = torch.as_strided(flat.view(torch.float8_e4m3fn), (pages, PAGE_SIZE, HEAD_DIM), (page_bytes, HEAD_DIM, 1))
    scales = torch.as_strided(flat.view(torch.float32), (pages, PAGE_SIZE, groups), (page_bytes // 4, groups, 1),
                              (PAGE_SIZE * HEAD_DIM) // 4)
    keys.copy_(x_fp8.reshape(pages, PAGE_SIZE, HEAD_DIM))
    scales.copy_(scale.reshape(pages, PAGE_SIZE, groups))
    return packed


def _unpack(packed):
    """The keys the packed cache holds, dequantized: (slots, HEAD_DIM) float64 on the CPU."""
    packed = packed.to("cpu").contiguous()
    slots = packed.shape[0]
    groups = HEAD_DIM // 128
    row_bytes = HEAD_DIM + groups * 4
    pages = slots // PAGE_SIZE
    flat = packed.reshape(-1)
    page_bytes = PAGE_SIZE * row_bytes
    keys = torch.as_strided(flat.view(torch.float8_e4m3fn), (pages, PAGE_SIZE, HEAD_DIM), (page_bytes, HEAD_DIM, 1))
    scales = torch.as_strided(flat.view(torch.float32), (pages, PAGE_SIZE, groups), (page_bytes // 4, groups, 1),
                              (PAGE_SIZE * HEAD_DIM) // 4)
    k = keys.double().reshape(pages, PAGE_SIZE, groups, 128) * scales.double()[..., None]
    return k.reshape(slots, HEAD_DIM)


def make_inputs(*, device, gen, tokens=3, heads=2, rows=85, pages=4):
    """As the upstream prefill test (tokenspeed-kernel/test/ops/test_attention_dsa.py, test_dsa_prefill_topk_fp8)
    makes them: q = randn(tokens, heads, 128) bf16, weights = randn(tokens, heads) float32, an index-key cache
    of `pages` pages of 64 slots packed from randn bf16 keys, kv_workspace_slots = arange(rows) + 17 (int64;
    taken modulo the cache's slots where rows + 17 passes them), and each token's candidate rows
    [row_start, row_end) drawn inside [0, rows) (the test's three are [0, 20), [10, 75), [70, 85))."""
    slots = pages * PAGE_SIZE
    q = torch.randn((tokens, heads, HEAD_DIM), generator=gen).to(torch.bfloat16).to(device)
    weights = torch.randn((tokens, heads), generator=gen).to(device)
    index_k = torch.randn((slots, HEAD_DIM), generator=gen).to(torch.bfloat16)
    index_k_cache = _pack(index_k).to(device)
    kv_workspace_slots = ((torch.arange(rows) + SLOT_OFFSET) % slots).to(torch.int64).to(device)
    starts = torch.randint(0, rows, (tokens,), generator=gen)
    ends = starts + 1 + (torch.rand((tokens,), generator=gen) * (rows - starts)).floor().long()  # in (starts, rows]
    return {"q": q, "weights": weights, "index_k_cache": index_k_cache, "kv_workspace_slots": kv_workspace_slots,
            "row_starts": starts.to(torch.int32).to(device), "row_ends": ends.to(torch.int32).to(device)}


def reference(q, weights, index_k_cache, kv_workspace_slots, row_starts, row_ends):
    """The DSA indexer's score of each (token, row): softmax_scale * sum over heads of w * ReLU(q . k), with k the
    dequantized key at the row's slot; -inf outside the token's [row_start, row_end). (tokens, rows) float64."""
    k = _unpack(index_k_cache)[kv_workspace_slots.to("cpu").long()]  # (rows, HEAD_DIM)
    qd = q.to("cpu", torch.float64)
    per_head = torch.einsum("thd,rd->thr", qd, k).clamp_min(0.0)
    scores = (per_head * weights.to("cpu", torch.float64)[:, :, None]).sum(dim=1) * SOFTMAX_SCALE
    cols = torch.arange(k.shape[0])[None, :]
    inside = (cols >= row_starts.to("cpu").long()[:, None]) & (cols < row_ends.to("cpu").long()[:, None])
    return torch.where(inside, scores, torch.full_like(scores, float("-inf")))


# heads up to 16, not the 64 of DeepSeek V3.2's indexer: the kernel unrolls its head loop, and under the
# interpreter 16 tokens x 64 heads x 256 rows took 137 s for one call
FUZZ = {"tokens": (1, 8), "heads": (1, 16), "rows": (1, 256), "pages": (1, 4)}
