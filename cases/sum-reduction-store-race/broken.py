"""A sum over a grid of programs that all store their block's sum to ``output[0]``.

The first reduction many people write: launch ``cdiv(n, BLOCK)`` programs, let each
load its block and ``tl.sum`` it, and store the result. ``tl.sum`` reduces one
block, not the whole grid, and every program stores to the same address, so
``output[0]`` ends up holding *one* block's sum: whichever store landed last. Tested
with ``n <= BLOCK`` (one program) it is right, which is how it gets past a first
test.

On a GPU thousands of programs run at once and which store lands last depends on
scheduling, so the result changes from run to run. Under ``TRITON_INTERPRET=1`` the
programs run one after another in program-id order: the last block always wins,
and the result is wrong but perfectly repeatable.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(x))  # BUG: every program stores its block's sum to the same address


def vector_sum(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    sum_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
