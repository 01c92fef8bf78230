"""SiLU under ``@triton.autotune``, launched on a grid that still uses the old fixed BLOCK.

The kernel started life the way Triton's tutorials write it: ``BLOCK = 1024``, one
program per 1024 elements, and a launcher that says so twice, in the grid
``(triton.cdiv(n, BLOCK),)`` and in ``BLOCK=BLOCK``. Then someone hands ``BLOCK`` to
``@triton.autotune`` (smaller blocks, more programs, better for the small tensors of
this model) and deletes ``BLOCK=BLOCK`` from the launch, as they must: the autotuner
refuses a meta-parameter that is also passed by hand. The grid line still divides
by the old constant.

Now each of the ``cdiv(n, 1024)`` programs covers only ``BLOCK`` elements of its
1024: with ``BLOCK = 256`` the launch processes the first quarter of ``x``, with
``BLOCK = 512`` the first half. Every tuned config is smaller than 1024, so whichever
one the autotuner picks, the rest of ``out`` is never written. The masks are all
right, nothing reads or writes out of bounds, and nothing complains.
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024  # the block the launch was written for, before autotuning


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 256}, num_warps=2),
        triton.Config({"BLOCK": 512}, num_warps=4),
    ],
    key=["n"],
)
@triton.jit
def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * tl.sigmoid(x), mask=mask)


def silu(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n = out.numel()
    silu_kernel[(triton.cdiv(n, BLOCK),)](x, out, n)  # BUG: the grid divides by the old constant, not by the tuned BLOCK
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
