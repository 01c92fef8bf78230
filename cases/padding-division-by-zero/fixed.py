"""A per-row mean of ratios that selects 0 for the padding lanes after the division.

``tl.where(mask, p / q, 0.0)`` still divides 0 by 0 in the padding lanes, but it
*selects* 0.0 there, and a select does not propagate the NaN it discards. The sum then
sees only the real ratios plus zeros. This works whatever the padding computes; loading
``q`` with ``other=1.0`` would also work here (``0 / 1 = 0``), but only as long as the
expression stays a plain ``p / q``.
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
    ratio = tl.where(mask, p / q, 0.0)  # FIX: select 0 for the padding lanes, dropping their NaN
    tl.store(out_ptr + row, tl.sum(ratio, axis=0) / n_cols)


def mean_ratio(p: torch.Tensor, q: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = p.shape
    assert p.stride() == q.stride()
    mean_ratio_kernel[(n_rows,)](p, q, out, p.stride(0), n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return out
