"""nrm2 by ``tl.atomic_add``: close to the reference, never the same twice.

Each program adds its block's sum of squares into ``out`` with an atomic. That is
race-free, and the result is within about 1e-6 of the true norm. But fp32 addition
is not associative, and on a GPU the order in which thousands of atomics reach
``out`` depends on scheduling, so the last bits differ from run to run. Anything
that needs bitwise reproducibility (a regression test, a checkpoint comparison,
debugging a divergence) breaks. The interpreter runs programs in order, so there
the result is always the same and the problem is hidden.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def nrm2_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x * x))  # BUG: the order of fp32 atomic adds varies per run


def nrm2(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    nrm2_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out.sqrt()


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
