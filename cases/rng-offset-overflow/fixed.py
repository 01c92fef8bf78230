"""Chunked seeded dropout with an int64 Philox counter: a different number for every element.

Widening the row index to int64 before the multiply makes the counter an int64, and
``tl.rand`` then feeds its high 32 bits to Philox as the second counter word: counters
``i`` and ``i + 2**32`` are different inputs and give different numbers. The counters
below 2**32 are unchanged (their high word is 0, as before), so masks drawn with the
old kernel for smaller sequences stay the same.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def dropout_kernel(x_ptr, out_ptr, n_cols, row_start, p, seed, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + pid * n_cols + cols, mask=mask)
    row = row_start + pid  # the row's index in the whole sequence
    r = tl.rand(seed, row.to(tl.int64) * n_cols + cols)  # FIX: an int64 counter: Philox gets its high word too
    out = tl.where(r > p, x / (1 - p), 0.0)
    tl.store(out_ptr + pid * n_cols + cols, out, mask=mask)


def dropout(x: torch.Tensor, p: float, seed: int, row_start: int, out: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    dropout_kernel[(n_rows,)](x, out, n_cols, row_start, p, seed, BLOCK=triton.next_power_of_2(n_cols))
    return out
