"""A vector sum that zeroes its atomic accumulator before the programs add into it.

``out.zero_()`` is ``torch.zeros`` for a tensor the caller already allocated: one tiny
fill kernel before the launch, and the first atomic add starts from 0. (Where the
launcher allocates the accumulator itself, ``torch.zeros`` instead of ``torch.empty`` is
the same fix.) The order of the atomic adds still varies from run to run on a GPU, so
the last bits of the sum may differ between runs; that is the subject of
``nrm2-atomic-order``, not of this case.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def vector_sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))


def vector_sum(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    out.zero_()  # FIX: an atomic accumulator must start at 0
    vector_sum_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
