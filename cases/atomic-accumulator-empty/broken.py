"""A vector sum whose programs ``tl.atomic_add`` their partials into a ``torch.empty`` output.

Each program sums one block and adds its partial into ``out[0]`` with
``tl.atomic_add``, the usual one-pass reduction across programs. An atomic add is a
read-modify-write: the first program adds its partial to whatever ``out[0]`` already
holds, so the accumulator must start at 0. ``out`` comes from ``torch.empty``, and
``torch.empty`` does not clear memory: the caching allocator hands back a block that
last held some other tensor, and the result comes out as ``leftover + sum``.

On a fresh process the block often holds 0, so the first call, and every test that
runs it once, is right. The bug shows later in a long-running job, when the allocator
starts recycling blocks, and then the error is exactly the leftover value.
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
    vector_sum_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)  # BUG: out came from torch.empty; the atomics add onto its leftover
    return out
