"""nrm2 with a grid of programs that all store to ``out[0]``.

Each program computes the norm of its own block and stores it to the same address.
Nothing orders those stores: on a GPU thousands of programs run at once and the
value left in ``out[0]`` is whichever store landed last, which changes from run to
run. Under ``TRITON_INTERPRET=1`` the programs run one after another in program-id
order, so the last block always wins: the result is wrong but perfectly repeatable,
and the interpreter hides the race.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def nrm2_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sqrt(tl.sum(x * x)))  # BUG: every program stores to the same address


def nrm2(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    nrm2_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
