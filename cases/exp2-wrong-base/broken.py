"""Row log-sum-exp computed in base 2, returned as if it were in base e.

Fast softmax and attention kernels work in base 2: the hardware's special-function unit
computes ``2**x``, and ``exp(x)`` is ``exp2(x * log2(e))``. So the kernel scales the
scores by ``log2(e)`` once, keeps the running max and sum in that base-2 domain, and
adds them up at the end: ``m2 + log2(l)``. That is ``log2(sum(exp(x)))``, the
log-sum-exp *in base 2*. The caller expects ``torch.logsumexp``, the natural log, and
the two differ by the factor ``ln(2)``: every result is 1.4427 times too large.

Nothing about the numbers looks wrong on their own: they are finite, of the right
order, and ordered the same way as the right ones. The softmax a kernel like this
produces is still right (the base cancels), which is why the bug survives until
something consumes the ``lse`` itself: the backward pass, or the merge of two partial
attention results.
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
    lse = m2 + tl.log2(l)  # BUG: this is the log-sum-exp in base 2; the natural-log one is this times ln(2)
    tl.store(out_ptr + row, lse)


def logsumexp(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    logsumexp_kernel[(n_rows,)](x, out, x.stride(0), n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return out
