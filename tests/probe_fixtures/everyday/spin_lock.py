"""Every program adds its block's sum to a total and 1 to a counter under a spin lock: the
lock taken with ``tl.atomic_cas`` on a scalar pointer, the total and the counter read and
written with plain loads and stores, the lock given back with ``tl.atomic_xchg``. Correct
(integers: the order the programs take the lock in does not change the sums), so the probe
must find nothing; returns a tuple."""

import torch
import triton
import triton.language as tl


@triton.jit
def locked_sum_kernel(x_ptr, total_ptr, count_ptr, lock_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    part = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0))
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    tl.store(total_ptr, tl.load(total_ptr) + part)
    tl.store(count_ptr, tl.load(count_ptr) + 1)
    tl.atomic_xchg(lock_ptr, 0)


def launch(x, total, count, lock):
    BLOCK = 64
    locked_sum_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, total, count, lock, x.numel(), BLOCK=BLOCK)
    return total, count


def make_inputs(*, device, gen, n=300):
    return {"x": torch.randint(-1000, 1000, (n,), generator=gen, dtype=torch.int32).to(device),
            "total": torch.zeros(1, dtype=torch.int32, device=device),
            "count": torch.zeros(1, dtype=torch.int32, device=device),
            "lock": torch.zeros(1, dtype=torch.int32, device=device)}


def reference(x, total, count, lock):
    return x.long().sum().reshape(1), torch.full((1,), (x.numel() + 63) // 64)
