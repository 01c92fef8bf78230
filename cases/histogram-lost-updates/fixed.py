"""A histogram by ``tl.atomic_add``: every increment lands, whatever the duplicates.

``tl.atomic_add(hist_ptr + bins, 1, mask=mask)`` performs each lane's
read-modify-write as one indivisible operation, so two lanes of one block, or two
programs, adding to the same bin both count. Integer addition is associative, so
the order in which the atomics land does not matter: the counts are exact and the
same on every run.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bins = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)  # FIX: one atomic read-modify-write per lane


def histogram(x: torch.Tensor, num_bins: int) -> torch.Tensor:
    n = x.numel()
    hist = torch.zeros(num_bins, device=x.device, dtype=torch.int32)
    histogram_kernel[(triton.cdiv(n, 1024),)](x, hist, n, BLOCK=1024)
    return hist
