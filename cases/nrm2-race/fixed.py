"""nrm2 whose programs add into ``out[0]`` with an atomic, instead of storing over it.

``tl.atomic_add`` makes each program's read-add-write of ``out[0]`` one indivisible
operation, so no program's contribution is overwritten: ``out[0]`` ends up holding the
sum of every block's sum of squares. Two lines of the launcher change with it: ``out``
must start at zero, and the square root moves to the end, taken once of the total,
because the norms of blocks do not add up to the norm of the vector (that trap is
nrm2-sqrt-per-block).

The result is right, but on a GPU its last bits vary from run to run: fp32 addition
is not associative, and the atomics land in a different order each time. That is the
trap of nrm2-atomic-order. fast.py, beside this file, is the two-stage reduction that
is right and bitwise reproducible.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def nrm2_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x * x))  # FIX: add this block's sum of squares; an atomic loses no update


def nrm2(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    out = torch.zeros(1, device=x.device, dtype=torch.float32)  # FIX: the atomics add into zero
    nrm2_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out.sqrt()  # FIX: one square root, of the total


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
