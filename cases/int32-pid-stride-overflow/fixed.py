"""Per-block int8 scales with the row index widened to int64 where it is defined.

Casting the program id to int64 makes ``offs_n`` int64, and with it every product
derived from it: ``offs_n * stride_n`` no longer wraps, whatever the stride. This is
what SageAttention's fix does ("promote the index to int64 where it is defined"), and
what its attention kernels already did for the batch and head indices. The cost is a
few 64-bit integer instructions per element's address, nothing measurable next to
the loads.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def block_scales_kernel(q_ptr, scale_ptr, n_rows, stride_n, stride_h, n_blocks,
                        D: tl.constexpr, BLOCK_N: tl.constexpr):
    blk = tl.program_id(0).to(tl.int64)  # FIX: int64 from the start: offs_n * stride_n is an int64 product
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
