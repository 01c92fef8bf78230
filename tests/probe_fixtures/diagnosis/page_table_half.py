"""A page table, one program per request: entry j is the page id req_pages[row, j]. The table
starts as -1 (no page). The loop writes 64 entries a trip but counts its trips in steps of
128 entries, so it runs half as often as it must and the second half of each table keeps its
-1 (the shape of a real page-table bug whose step assumed another page size). The diagnosis
should see entries that were never written, not values computed wrong."""

import torch
import triton
import triton.language as tl


@triton.jit
def page_table_kernel(pages_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for t in range(0, tl.cdiv(n, 2 * BLOCK)):  # BUG: trips of 2 * BLOCK entries, but each writes BLOCK
        cols = t * BLOCK + tl.arange(0, BLOCK)
        ids = tl.load(pages_ptr + row * n + cols, mask=cols < n, other=0)
        tl.store(out_ptr + row * n + cols, ids, mask=cols < n)


def launch(pages):
    out = torch.full(pages.shape, -1, dtype=pages.dtype, device=pages.device)
    page_table_kernel[(pages.shape[0],)](pages, out, pages.shape[1], BLOCK=64)
    return out


def make_inputs(*, device, gen, rows=4, n=512):
    return {"pages": torch.randint(0, 10_000, (rows, n), generator=gen, dtype=torch.int64).to(device)}


def reference(pages):
    return pages.clone()
