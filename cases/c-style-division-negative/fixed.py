"""``torch.roll`` in Triton with a remainder that cannot go negative.

``offs - shift + n`` is never negative for ``0 <= shift <= n`` (the launcher reduces
``shift`` modulo ``n`` first, with Python's ``%``, so any shift is allowed), and for a
non-negative left operand C's and Python's ``%`` agree. The general form, for a left
operand of any sign, is ``((a % n) + n) % n``.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def roll_kernel(x_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    src = (offs - shift + n) % n  # FIX: keep the left operand non-negative, where C and Python agree
    tl.store(out_ptr + offs, tl.load(x_ptr + src, mask=mask), mask=mask)


def roll(x: torch.Tensor, out: torch.Tensor, shift: int) -> torch.Tensor:
    n = x.numel()
    shift = shift % n  # FIX: Python's %, on the host: 0 <= shift < n
    roll_kernel[(triton.cdiv(n, 1024),)](x, out, n, shift, BLOCK=1024)
    return out
