"""A sum as a two-stage reduction: one partial per program, then one program adds them.

Stage 1 stores each block's sum to its own slot, ``partial[pid]``: no two programs
write the same address, so there is nothing to race on. Stage 2 is a second launch
(the kernel boundary orders the memory) of a single program that adds the partials
in a fixed order. No atomics, so the result is the same, bit for bit, on every run;
``tl.atomic_add(out_ptr, tl.sum(x))`` into a zeroed ``out`` would also be right, but
its fp32 additions land in a different order each run on a GPU.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, partial_ptr, n, BLOCK: tl.constexpr):  # FIX: writes partials, not out
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(x))  # FIX: each program owns one slot


@triton.jit
def finish_kernel(partial_ptr, out_ptr, m, BLOCK: tl.constexpr):  # FIX: second stage, fixed order
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, m, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < m, other=0.0)
    tl.store(out_ptr, tl.sum(acc))


def vector_sum(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    m = triton.cdiv(n, 1024)  # FIX: one partial per program
    partial = torch.empty(m, device=x.device, dtype=torch.float32)  # FIX: a slot for each
    out = torch.empty(1, device=x.device, dtype=torch.float32)
    sum_kernel[(m,)](x, partial, n, BLOCK=1024)  # FIX: stage 1 into the slots
    finish_kernel[(1,)](partial, out, m, BLOCK=1024)  # FIX: stage 2 adds them in order
    return out
