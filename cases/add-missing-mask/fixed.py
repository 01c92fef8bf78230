"""Vector add with a mask on every load and store of the last, partial block."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n  # FIX
    x = tl.load(x_ptr + offs, mask=mask)  # FIX
    y = tl.load(y_ptr + offs, mask=mask)  # FIX
    tl.store(out_ptr + offs, x + y, mask=mask)  # FIX


def add(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
