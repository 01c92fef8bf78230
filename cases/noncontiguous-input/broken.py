"""An elementwise scale that walks its input with flat offsets, handed a transposed view.

The kernel is the tutorial's elementwise pattern: program ``pid`` takes offsets
``pid * BLOCK + arange(BLOCK)`` and loads ``x_ptr + offs``. That treats ``x`` as a flat
array in row-major order, which is what ``x`` is only if it is contiguous. Triton
receives a tensor as a bare pointer to its first element: the shape and the strides
stay behind in Python, and nothing checks that the kernel's idea of the layout is the
tensor's.

Hand it ``a.t()``, a transposed view of a contiguous matrix, and the flat offsets walk
the storage in *storage* order, which is ``a``'s row-major order, not ``x``'s.
Every value read is a real element of ``x`` (no out-of-bounds access, no NaN), but
most land in the wrong place of ``out``: the result is a scrambled ``alpha * x``. A
view with gaps, such as a column slice ``a[:, :k]``, would be worse: flat offsets
would also read elements that are not in the view at all.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, alpha, BLOCK: tl.constexpr):  # BUG: no shape or strides
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)  # BUG: flat offset = position in storage, not x[row, col]
    tl.store(out_ptr + offs, x * alpha, mask=mask)  # BUG: same assumption for out


def scale(x: torch.Tensor, out: torch.Tensor, alpha: float) -> torch.Tensor:
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, alpha, BLOCK=1024)  # BUG: strides never passed
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
