"""Chunked seeded dropout whose Philox counter is an int32: past 2**32 the random numbers repeat.

Seeded dropout draws element ``i``'s number as ``tl.rand(seed, i)``: a counter-based
generator (Philox) whose output is a fixed function of ``(seed, counter)``. To get
the same mask whether a long sequence is processed whole or chunk by chunk (chunked
prefill, a chunked loss, sequence parallelism), the counter must be the element's
index in the *whole* sequence, ``(row_start + r) * cols + c``, and every element must
get a different one.

Every operand here fits in int32: the chunk's first row (a Python int below 2**31),
the row within the chunk, the number of columns. So Triton computes the counter in
int32, and it wraps. Past 2**31 it goes negative, which happens to be harmless:
``tl.rand`` reinterprets an int32 offset as an unsigned 32-bit counter, so the bits
are the ones an int64 counter would give. Past 2**32 it is not: an int32 has no
high word, and the counter that Philox sees restarts from 0. Row 524,288 of an
8,192-column sequence draws exactly the numbers of row 0, row 524,289 those of row 1,
and so on: the dropout mask repeats. Each mask still looks random (the right drop
rate, no visible pattern within a chunk), so nothing but a comparison with the right
stream shows it, and the interpreter, whose NumPy int32 arithmetic wraps the same
way, shows it too.

(The same happens in attention dropout whose counter is
``(batch * heads + head) * seqlen_q * seqlen_k + ...`` in int32: two different
(batch, head) slots get the same mask.)
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
    r = tl.rand(seed, row * n_cols + cols)  # BUG: an int32 counter: past 2**32 it wraps and repeats earlier rows' numbers
    out = tl.where(r > p, x / (1 - p), 0.0)
    tl.store(out_ptr + pid * n_cols + cols, out, mask=mask)


def dropout(x: torch.Tensor, p: float, seed: int, row_start: int, out: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    dropout_kernel[(n_rows,)](x, out, n_cols, row_start, p, seed, BLOCK=triton.next_power_of_2(n_cols))
    return out
