"""The bias gradient accumulated in an fp32 buffer and rounded to bf16 once, at the end.

The kernel is unchanged: it still adds each chunk into the running sum it is given.
What changes is the buffer: ``acc`` is fp32, so the running sum keeps 24 significant
bits across chunks, and the single conversion to bf16 happens in ``db.copy_(acc)``
(round to nearest even). The price is one fp32 buffer the size of the bias; for a
weight gradient (``V x H``) that buffer is what Liger-Kernel's ``accum_dtype`` option
pays for.
"""

import torch
import triton
import triton.language as tl

CHUNK = 16  # rows per chunk


@triton.jit
def bias_grad_kernel(dy_ptr, db_ptr, stride, n_rows, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    rows = tl.arange(0, BLOCK_M)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    dy = tl.load(dy_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
    part = tl.sum(dy.to(tl.float32), axis=0)
    db = tl.load(db_ptr + cols, mask=cols < n_cols)
    tl.store(db_ptr + cols, db + part, mask=cols < n_cols)


def bias_grad(dy: torch.Tensor, db: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = dy.shape
    acc = torch.zeros(n_cols, dtype=torch.float32, device=dy.device)  # FIX: keep the running sum in fp32
    for start in range(0, n_rows, CHUNK):
        chunk = dy[start:start + CHUNK]
        bias_grad_kernel[(triton.cdiv(n_cols, 128),)](chunk, acc, chunk.stride(0), chunk.shape[0], n_cols, BLOCK_M=CHUNK, BLOCK_N=128)  # FIX: accumulate into acc
    return db.copy_(acc)  # FIX: round to bf16 once, at the end
