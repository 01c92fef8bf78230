"""Vector add launched with ``n // BLOCK`` programs: the tail is never written.

This is the tutorial's vector add, mask and all. The kernel is correct: the last
program's ``mask = offs < n`` would keep it inside ``x``, ``y`` and ``out``. But the
launcher sizes the grid with floor division, ``n // BLOCK``, which rounds *down*: when
``n`` is not a multiple of ``BLOCK`` the partial block at the end gets no program at
all, and the last ``n % BLOCK`` elements of ``out`` are never written. Nothing reads
or writes out of bounds and nothing raises. ``out`` simply keeps whatever it held
before: zeros if it came from ``torch.zeros``, stale memory if from ``torch.empty``.
When ``n < BLOCK`` the grid is empty and nothing at all is computed.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n = out.numel()
    add_kernel[(n // 1024,)](x, y, out, n, BLOCK=1024)  # BUG: floor division drops the partial last block
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
