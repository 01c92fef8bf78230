"""nrm2 as a two-stage reduction: safe under ``@triton.autotune`` and deterministic.

Stage 1 writes one partial sum of squares per program with a plain ``tl.store``:
running it again (as the autotuner does, many times) writes the same values to the
same places, so benchmarking leaves nothing behind. Stage 2, a single program, adds
the partials in a fixed order and takes the square root. No atomics, so the result
is also bitwise the same on every run.
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
    tl.store(partial_ptr + pid, tl.sum(x * x))  # FIX: one partial per program, overwritten not added


@triton.jit
def finish_kernel(partial_ptr, out_ptr, m, BLOCK: tl.constexpr):  # FIX: second stage, fixed order
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, m, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < m, other=0.0)
    tl.store(out_ptr, tl.sqrt(tl.sum(acc)))


def nrm2(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    partial = torch.empty(triton.cdiv(n, 1024), device=x.device, dtype=torch.float32)  # FIX: room for any config
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    sumsq_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, partial, n)
    m = triton.cdiv(n, sumsq_kernel.best_config.kwargs["BLOCK"])  # FIX: partials the chosen config wrote
    finish_kernel[(1,)](partial, out, m, BLOCK=4096, num_warps=8)
    return out  # FIX
