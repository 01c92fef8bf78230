"""nrm2 in one program that walks the whole vector, block by block.

The program keeps a BLOCK-wide accumulator and adds the squares of each block
into it; ``tl.sum`` then reduces that accumulator once, at the end. One program is
slow on a big GPU (nrm2-atomic-order's fast.py is a two-stage reduction that fills
the machine), but it is correct and deterministic, and it is the smallest fix.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def nrm2_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)  # FIX: a running sum of squares, one per lane
    for start in range(0, n, BLOCK):  # FIX: visit every block of the tensor
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        acc += x * x  # FIX: accumulate across blocks
    tl.store(out_ptr, tl.sqrt(tl.sum(acc)))


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
