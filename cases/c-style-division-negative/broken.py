"""``torch.roll`` in Triton, with the wrap-around index written as in Python.

Output element ``i`` takes input element ``(i - shift) % n``. In Python, and in PyTorch
and NumPy, ``%`` takes the sign of the divisor, so ``(i - shift) % n`` is always in
``[0, n)``: that is why the line looks obviously right. Triton's integer ``%`` and
``//`` on tensors follow C instead, truncating toward zero, so ``-3 % 10`` is ``-3``,
not ``7``. For the first ``shift`` outputs, ``i - shift`` is negative, the "wrapped"
index stays negative, and the load reads ``shift`` elements *before* the start of
``x``: whatever memory sits there. The mask ``offs < n`` does not catch it, because the
mask tests the output index, not the index that is loaded.

Triton's documentation states the rule, and adds that it is the other way round for
scalars: ``//`` and ``%`` on Python ints in the launcher, or on constexprs, follow
Python. The same expression means two things depending on where it is evaluated.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def roll_kernel(x_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    src = (offs - shift) % n  # BUG: C remainder: negative when offs < shift, so the load reads before x
    tl.store(out_ptr + offs, tl.load(x_ptr + src, mask=mask), mask=mask)


def roll(x: torch.Tensor, out: torch.Tensor, shift: int) -> torch.Tensor:
    n = x.numel()
    roll_kernel[(triton.cdiv(n, 1024),)](x, out, n, shift, BLOCK=1024)
    return out
