"""Row log-sum-exp computed in base 2 and converted back to base e once, at the end.

``log2(y) * ln(2) == ln(y)``, so multiplying the base-2 result by ``ln(2)`` (0.693...)
gives the natural-log ``lse`` the caller expects. The inner loop keeps its fast
``exp2``; only the one value that leaves the kernel changes units.
"""

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)  # log2(e): exp(x) == exp2(x * LOG2E)


@triton.jit
def logsumexp_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    x2 = x * LOG2E  # to base 2
    m2 = tl.max(x2, axis=0)
    l = tl.sum(tl.exp2(x2 - m2), axis=0)
    lse = (m2 + tl.log2(l)) * 0.6931471805599453  # FIX: times ln(2): back to base e, the units the caller expects
    tl.store(out_ptr + row, lse)


def logsumexp(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    logsumexp_kernel[(n_rows,)](x, out, x.stride(0), n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return out
