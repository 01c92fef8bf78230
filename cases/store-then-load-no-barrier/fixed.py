"""Fused RMSNorm + RoPE with a barrier after the staging store and another before the final store.

``tl.debug_barrier()`` is a barrier across all threads of the program (``bar.sync``
on NVIDIA GPUs, which also orders their memory accesses within the block): after
the first, every warp's ``y`` is in ``out`` before any warp reads its partners;
after the second, every warp has read its partners before any warp overwrites
them. (Despite its name it is not a debugging aid; it is the one way to order
global-memory accesses between the threads of a program.) Each costs one barrier
per program, which is noise next to the loads.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def norm_rope_kernel(x_ptr, w_ptr, cos_ptr, sin_ptr, out_ptr, n_heads, eps, D: tl.constexpr):
    row = tl.program_id(0)  # one head of one token
    token = row // n_heads
    d = tl.arange(0, D)
    x = tl.load(x_ptr + row * D + d)
    y = x * tl.rsqrt(tl.sum(x * x, axis=0) / D + eps) * tl.load(w_ptr + d)
    tl.store(out_ptr + row * D + d, y)
    tl.debug_barrier()  # FIX: every warp's y is in out before anyone reads it back
    partner = tl.load(out_ptr + row * D + (d + D // 2) % D)
    tl.debug_barrier()  # FIX: every warp has read its partners before anyone overwrites them
    rot = tl.where(d < D // 2, -partner, partner)  # rotate_half(y)
    c = tl.load(cos_ptr + token * D + d)
    s = tl.load(sin_ptr + token * D + d)
    tl.store(out_ptr + row * D + d, y * c + rot * s)


def norm_rope(x: torch.Tensor, w: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
              out: torch.Tensor) -> torch.Tensor:
    rows, d = x.shape
    norm_rope_kernel[(rows,)](x, w, cos, sin, out, rows // cos.shape[0], 1e-6, D=d)
    return out
