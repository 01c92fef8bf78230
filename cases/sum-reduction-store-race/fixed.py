"""A sum whose programs add their block's sum into ``out[0]`` with an atomic.

``tl.atomic_add`` makes each program's read-add-write of ``out[0]`` one indivisible
operation, so no program's block sum is overwritten by another's store, and ``out``
now starts at zero for the atomics to add into. The result is the sum of the whole
vector.

It is right, but on a GPU its last bits vary from run to run: fp32 addition is not
associative, and the atomics land in a different order each time (the trap of
nrm2-atomic-order). fast.py, beside this file, is the two-stage reduction that is
right and bitwise reproducible.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x))  # FIX: add this block's sum; an atomic loses no update


def vector_sum(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    out = torch.zeros(1, device=x.device, dtype=torch.float32)  # FIX: the atomics add into zero
    sum_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
