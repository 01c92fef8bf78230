"""A per-row mean of ratios whose padding lanes divide 0 by 0.

One program per row, the row in one block of ``next_power_of_2(n_cols)`` lanes. Both
operands are loaded with the habitual ``other=0.0``, so each padding lane holds
``p = 0`` and ``q = 0``, and the elementwise ``p / q`` computes ``0 / 0 = NaN`` there.
The mask kept the loads inside the row; it does nothing for the arithmetic after them,
which runs on every lane of the block. ``tl.sum`` then adds the padding lanes with the
rest, and one NaN makes the whole sum NaN: every row of the result is NaN, although
every real ratio is finite. Nothing traps (IEEE division by zero is not an error), and
when ``n_cols`` is a power of two there is no padding and the kernel is right.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def mean_ratio_kernel(p_ptr, q_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    p = tl.load(p_ptr + row * stride + cols, mask=mask, other=0.0)
    q = tl.load(q_ptr + row * stride + cols, mask=mask, other=0.0)
    ratio = p / q  # BUG: the padding lanes compute 0 / 0 = NaN, and tl.sum adds them in
    tl.store(out_ptr + row, tl.sum(ratio, axis=0) / n_cols)


def mean_ratio(p: torch.Tensor, q: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = p.shape
    assert p.stride() == q.stride()
    mean_ratio_kernel[(n_rows,)](p, q, out, p.stride(0), n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return out
