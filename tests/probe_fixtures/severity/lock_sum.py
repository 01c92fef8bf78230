"""Column sums of a matrix, one program per block of rows, each adding its partial sums into the
output under a spin lock (atomic_cas, load, add, store, atomic_xchg), as Cut Cross-Entropy's
backward adds its gradient tiles: correct, but the order the programs take the lock in changes the
fp32 sums' last bits. ``launch_unlocked`` drops the lock's read of the output (each program stores
its own partial sum: the last one wins), a lost update whatever the order."""

import torch
import triton
import triton.language as tl


@triton.jit
def lock_sum_kernel(x_ptr, out_ptr, lock_ptr, rows, cols, ADD: tl.constexpr, BLOCK_R: tl.constexpr,
                    BLOCK_C: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.arange(0, BLOCK_C)
    x = tl.load(x_ptr + r[:, None] * cols + c[None, :], mask=(r[:, None] < rows) & (c[None, :] < cols), other=0.0)
    part = tl.sum(x, axis=0)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    if ADD:
        part += tl.load(out_ptr + c, mask=c < cols, other=0.0)
    tl.store(out_ptr + c, part, mask=c < cols)
    tl.atomic_xchg(lock_ptr, 0)


def _launch(x, add):
    rows, cols = x.shape
    out = torch.zeros(cols, dtype=torch.float32, device=x.device)
    lock = torch.zeros(1, dtype=torch.int32, device=x.device)
    lock_sum_kernel[(triton.cdiv(rows, 16),)](x, out, lock, rows, cols, ADD=add, BLOCK_R=16,
                                              BLOCK_C=triton.next_power_of_2(cols))
    return out


def launch(x):
    return _launch(x, True)


def launch_unlocked(x):
    return _launch(x, False)


def make_inputs(*, device, gen, rows=256, cols=16):
    return {"x": (1000.0 + torch.randn(rows, cols, generator=gen)).to(device)}


def reference(x):
    return x.double().sum(0)
