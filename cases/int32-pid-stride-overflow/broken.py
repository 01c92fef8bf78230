"""Per-block int8 scales of a strided view: ``rows * stride`` wraps in int32 though the view is small.

The quantisation pass of a SageAttention-style kernel: each program takes a block
of 128 rows of one head of ``q`` and stores ``max |q| / 127``. The rows are
addressed as ``offs_n[:, None] * stride_n``, where ``offs_n`` comes from
``tl.program_id`` (int32) and ``stride_n`` is a Python int below 2**31 (int32 too),
so the product is an int32 multiply.

``q`` is not contiguous: it is the first third of a fused QKV buffer, and its row
stride is ``3 * heads * head_dim`` (21,504 for 56 heads of 128), not ``heads *
head_dim``. Its 100,000 rows hold 716.8 M elements, so a guard like
``assert q.numel() < 2**31`` passes; but row 99,865 starts at element 2,147,496,960
of the buffer, past 2**31 - 1, and from there on ``offs_n * stride_n`` wraps to about
-2**31: the last 135 rows are read from about 4 GiB *before* the buffer. What
happens then depends on what is mapped there: an illegal-address fault, or plausible
wrong scales. Every test with a contiguous ``q``, or a shorter sequence, passes.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def block_scales_kernel(q_ptr, scale_ptr, n_rows, stride_n, stride_h, n_blocks,
                        D: tl.constexpr, BLOCK_N: tl.constexpr):
    blk = tl.program_id(0)  # BUG: int32, so offs_n * stride_n below is an int32 product: it wraps past 2**31
    h = tl.program_id(1)
    offs_n = blk * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    ptrs = q_ptr + h * stride_h + offs_n[:, None] * stride_n + offs_d[None, :]
    q = tl.load(ptrs, mask=offs_n[:, None] < n_rows, other=0.0)
    tl.store(scale_ptr + h * n_blocks + blk, tl.max(tl.abs(q)).to(tl.float32) / 127.0)


def block_scales(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    n_rows, heads, d = q.shape
    n_blocks = triton.cdiv(n_rows, 128)
    block_scales_kernel[(n_blocks, heads)](q, scale, n_rows, q.stride(0), q.stride(1), n_blocks,
                                           D=d, BLOCK_N=128)
    return scale
