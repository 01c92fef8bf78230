"""A paged KV cache read (decode attention's gather, reduced to its address arithmetic): each sequence sums the
key rows of its tokens, which live in pages of a shared pool, found through an int32 block table. The page's
offset ``page * page_stride`` is int32 (``page`` loaded from the int32 table, ``page_stride`` a runtime size), so it
wraps once the pool passes 2**31 elements (launch); the twin widens ``page`` first (launch_fixed). Both are right
at every size the interpreter can run. The output is small (sequences x head size): a wrong page shows as a wrong
sum, or as an access outside the pool."""

import torch
import triton
import triton.language as tl


@triton.jit
def paged_sum_kernel(cache_ptr, table_ptr, out_ptr, seq_len, max_pages, page_stride, row_stride,
                     PAGE: tl.constexpr, DIM: tl.constexpr):
    seq = tl.program_id(0).to(tl.int64)  # the table's row: widened, only the page offset wraps
    dims = tl.arange(0, DIM)
    acc = tl.zeros([DIM], dtype=tl.float32)
    for t in range(0, seq_len):
        page = tl.load(table_ptr + seq * max_pages + t // PAGE)
        k = tl.load(cache_ptr + page * page_stride + (t % PAGE) * row_stride + dims)
        acc += k.to(tl.float32)
    tl.store(out_ptr + seq * DIM + dims, acc)


@triton.jit
def paged_sum_kernel_64(cache_ptr, table_ptr, out_ptr, seq_len, max_pages, page_stride, row_stride,
                        PAGE: tl.constexpr, DIM: tl.constexpr):
    seq = tl.program_id(0).to(tl.int64)  # the table's row: widened, only the page offset wraps
    dims = tl.arange(0, DIM)
    acc = tl.zeros([DIM], dtype=tl.float32)
    for t in range(0, seq_len):
        page = tl.load(table_ptr + seq * max_pages + t // PAGE).to(tl.int64)
        k = tl.load(cache_ptr + page * page_stride + (t % PAGE) * row_stride + dims)
        acc += k.to(tl.float32)
    tl.store(out_ptr + seq * DIM + dims, acc)


def _run(kernel, cache, table, seq_len):
    seqs, max_pages = table.shape
    out = torch.empty(seqs, cache.shape[-1], dtype=torch.float32, device=cache.device)
    kernel[(seqs,)](cache, table, out, seq_len, max_pages, cache.stride(0), cache.stride(1),
                    PAGE=cache.shape[1], DIM=cache.shape[-1])
    return out


def launch(cache, table, seq_len):
    return _run(paged_sum_kernel, cache, table, seq_len)


def launch_fixed(cache, table, seq_len):
    return _run(paged_sum_kernel_64, cache, table, seq_len)


def make_inputs(*, device, gen, seqs=8, pages=64, page=16, dim=128, seq_len=40):
    """A pool of ``pages`` pages; each sequence's pages drawn from it at random (no two sequences share one)."""
    per = -(-seq_len // page)
    cache = torch.randn(pages, page, dim, generator=gen).to(torch.float16)
    order = torch.randperm(pages, generator=gen)
    table = order.repeat(-(-seqs * per // pages))[: seqs * per].reshape(seqs, per).to(torch.int32)
    return {"cache": cache.to(device), "table": table.to(device), "seq_len": seq_len}


def reference(cache, table, seq_len):
    page = cache.shape[1]
    t = torch.arange(seq_len, device=table.device)
    rows = cache[table[:, t // page].long(), t % page]  # (seqs, seq_len, dim)
    return rows.double().sum(dim=1)
