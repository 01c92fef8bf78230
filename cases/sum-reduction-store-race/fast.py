"""A sum as a two-stage reduction in Triton: right, and the same bits on every run.

Stage 1 stores each block's sum to a slot of its own, ``partial[pid]``: no two programs
write the same address, so there is nothing to race on, and no atomics, so nothing is
added in an order that depends on scheduling. Stage 2 is a second launch (the kernel
boundary orders the memory) of a single program that adds the partials in a fixed
order. fixed.py's one atomic per program is the smaller change and is right too, but
its fp32 additions land in a different order on each run on a GPU.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(x))  # stage 1: each program owns one slot


@triton.jit
def finish_kernel(partial_ptr, out_ptr, m, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)  # stage 2: one program, a fixed order
    for start in range(0, m, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < m, other=0.0)
    tl.store(out_ptr, tl.sum(acc))


def vector_sum(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    m = triton.cdiv(n, 1024)
    partial = torch.empty(m, device=x.device, dtype=torch.float32)
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    sum_kernel[(m,)](x, partial, n, BLOCK=1024)
    finish_kernel[(1,)](partial, out, m, BLOCK=1024)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
