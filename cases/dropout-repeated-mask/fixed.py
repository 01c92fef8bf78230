"""Seeded dropout with a unique Philox offset per element: the element's global index.

``tl.rand(seed, offsets)`` with the same ``offsets`` used to address memory: element
``i`` of the tensor gets the number for ``(seed, i)``, whichever program handles it
and whatever ``BLOCK`` is. The mask is reproducible from the seed alone (the point
of seeded dropout) and independent across blocks.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    r = tl.rand(seed, offsets)  # FIX: the global element index: a different number for every element
    out = tl.where(r > p, x / (1 - p), 0.0)
    tl.store(out_ptr + offsets, out, mask=mask)


def dropout(x: torch.Tensor, p: float, seed: int, out: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    dropout_kernel[(triton.cdiv(n, 1024),)](x, out, n, p, seed, BLOCK=1024)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
