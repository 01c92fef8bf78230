"""nrm2 with ``tl.atomic_add`` under ``@triton.autotune``: right on the second call only.

Each program squares its block, sums it, and atomically adds the sum into ``out``,
which the launcher zeroes. Without autotuning that is a correct (if
non-deterministic) reduction. With it, the *first* call for a new ``n`` first runs
every config many times to time it (``triton.testing.do_bench``: a warm-up, then
~100 ms of repetitions), and every one of those launches adds into the same ``out``.
The returned value is the norm of the vector repeated hundreds or thousands of
times. The second call finds the tuned config in the cache and is right.
"""

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 4096}, num_warps=8),
        triton.Config({"BLOCK": 8192}, num_warps=16),
        triton.Config({"BLOCK": 16384}, num_warps=16),
    ],
    key=["n"],  # BUG: no reset_to_zero=["out_ptr"]; every benchmarking launch adds into out
)
@triton.jit
def sumsq_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x * x))  # NOTE: adds into out: a side effect that every launch repeats


def nrm2(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    out = torch.zeros(1, device=x.device, dtype=torch.float32)
    sumsq_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out.sqrt()  # NOTE: on a first call, out also holds the sums of every benchmarking launch


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
