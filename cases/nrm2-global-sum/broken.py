"""nrm2 in one program, trusting ``tl.sum`` to be global. It is not.

``tl.sum(x)`` reduces the block ``x`` that *this program* holds: BLOCK elements.
It knows nothing about other programs or about the rest of the tensor. Launched
with a grid of one, the kernel loads the first BLOCK elements, squares and sums
them, and returns the norm of that slice. Every element past the first block is
silently ignored.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def nrm2_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)  # BUG: the first BLOCK elements, and nothing walks on to the rest
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    acc = x * x
    tl.store(out_ptr, tl.sqrt(tl.sum(acc)))  # NOTE: tl.sum reduces this block, not the tensor


def nrm2(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    nrm2_kernel[(1,)](x, out, x.numel(), BLOCK=1024)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
