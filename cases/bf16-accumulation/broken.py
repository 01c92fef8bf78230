"""A bias gradient accumulated chunk by chunk into a bf16 tensor.

The gradient of a bias is the column sum of the upstream gradient ``dy``. The launcher
walks the rows (tokens) in chunks, as a chunked loss or gradient accumulation over
micro-batches does, and the kernel adds one chunk's column sums into the running
result. The kernel looks careful: it converts the chunk to fp32, reduces it in fp32,
and adds the partial to the running sum in fp32 (``db + part`` promotes the bf16
``db`` to fp32). But the running sum lives in ``db``, a bf16 tensor like the bias
itself, and ``tl.store`` converts the fp32 result to ``db``'s element type without a
word. So the running sum is rounded to bf16, 8 significant bits, after every chunk.

Once the running sum is 2**8 times larger than a chunk's contribution, the
contribution rounds away; long before that, each rounding adds an error of up to half
a bf16 ulp of the running sum, and with hundreds of chunks those errors add up to more
than the sum's own precision. bf16 has fp32's range, so nothing overflows and nothing
warns: the gradient is just wrong.
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
    db.zero_()  # BUG: the running sum lives in db, a bf16 tensor: tl.store rounds it to bf16 after every chunk
    for start in range(0, n_rows, CHUNK):
        chunk = dy[start:start + CHUNK]
        bias_grad_kernel[(triton.cdiv(n_cols, 128),)](chunk, db, chunk.stride(0), chunk.shape[0], n_cols, BLOCK_M=CHUNK, BLOCK_N=128)  # BUG: accumulates into db
    return db  # BUG: the sum, rounded once per chunk instead of once
