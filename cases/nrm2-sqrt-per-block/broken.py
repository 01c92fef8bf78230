"""nrm2 that takes the square root too early, in every block.

sqrt does not distribute over addition: sqrt(a + b) != sqrt(a) + sqrt(b). Each
program adds the norm of its own block into ``out``, so the result is the sum of
the per-block norms, which for random data is about sqrt(number of blocks) times
the true norm. The combine step of a reduction must be the operation that is
associative for the quantity you reduce: here, sums of squares.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def nrm2_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sqrt(tl.sum(x * x)))  # BUG: adds norms, not squares


def nrm2(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    nrm2_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
