"""The same scale, with the strides passed in and each flat index turned into (row, col).

Each flat index still counts the elements of ``x`` in logical row-major order, but is
split into ``row = offs // n_cols`` and ``col = offs % n_cols`` and the address is
computed from the tensor's own strides, for ``x`` and for ``out``. Any 2-D layout now
works: contiguous, transposed, sliced, or padded between rows.

The other common fix is ``x = x.contiguous()`` in the launcher: one line, but for a
non-contiguous ``x`` it is a full extra copy (a read and a write of ``x``) before the
kernel runs.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n_elements, n_cols, stride_xm, stride_xn, stride_om, stride_on,  # FIX: layout
                 alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    row = offs // n_cols  # FIX: logical position ...
    col = offs % n_cols  # FIX: ... of each flat index
    x = tl.load(x_ptr + row * stride_xm + col * stride_xn, mask=mask)  # FIX: address from x's strides
    tl.store(out_ptr + row * stride_om + col * stride_on, x * alpha, mask=mask)  # FIX: and from out's


def scale(x: torch.Tensor, out: torch.Tensor, alpha: float) -> torch.Tensor:
    n = x.numel()
    scale_kernel[(triton.cdiv(n, 1024),)](x, out, n, x.shape[1], x.stride(0), x.stride(1),  # FIX: pass them
                                          out.stride(0), out.stride(1), alpha, BLOCK=1024)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
