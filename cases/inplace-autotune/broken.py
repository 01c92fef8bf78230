"""An in-place ``x += y`` under ``@triton.autotune``: every benchmarking run adds y again.

The kernel reads ``x`` and ``y`` and writes the sum back into ``x``: an in-place
update, the way optimizer steps, residual adds and KV-cache writes are done to save
memory. Tuning ``BLOCK`` looks harmless. But the first call for a new ``n`` first
times every config: ``triton.testing.do_bench`` runs each one for a warm-up and
then ~100 ms of repetitions, and each of those launches adds ``y`` into ``x`` once
more. The call returns ``x + (launches + 1) * y``, and ``x``, the caller's tensor,
is left that way. The second call finds the tuned config in the cache and adds
``y`` once, which is right, but ``x`` is already ruined.
"""

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=8),
    ],
    key=["n"],  # BUG: no restore_value=["x_ptr"]; every benchmarking launch updates x
)
@triton.jit
def add_inplace_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x + y, mask=mask)  # NOTE: an in-place update: a side effect that every launch repeats


def add_(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    add_inplace_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, n)
    return x


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
