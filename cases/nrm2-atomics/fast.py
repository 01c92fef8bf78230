"""nrm2 as a two-stage reduction: safe under ``@triton.autotune`` without ``reset_to_zero``, and deterministic.

Stage 1 writes one partial sum of squares per program with a plain ``tl.store``:
running it again, as the autotuner does many times, writes the same values to the
same places, so benchmarking leaves nothing behind and nothing needs zeroing. Stage
2, a single program, adds the partials in a fixed order and takes the square root.
No atomics, so the result is also bitwise the same on every run. The launcher reads
``best_config`` to tell stage 2 how many partials the chosen config wrote.

This is the version ``python -m harness bench nrm2-atomics`` times against
``torch.linalg.vector_norm``; fixed.py is the one-line fix of the trap.
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
    key=["n"],
)
@triton.jit
def sumsq_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(x * x))  # a slot per program: a repeated launch writes the same value


@triton.jit
def finish_kernel(partial_ptr, out_ptr, m, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)  # stage 2: one program, a fixed order
    for start in range(0, m, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < m, other=0.0)
    tl.store(out_ptr, tl.sqrt(tl.sum(acc)))


def nrm2(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    partial = torch.empty(triton.cdiv(n, 1024), device=x.device, dtype=torch.float32)  # enough for the smallest BLOCK
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    sumsq_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, partial, n)
    m = triton.cdiv(n, sumsq_kernel.best_config.kwargs["BLOCK"])  # the partials the chosen config wrote
    finish_kernel[(1,)](partial, out, m, BLOCK=4096, num_warps=8)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
