"""A correct doubling whose first call spends 40 s where the worker's alarm cannot reach it, as a GPU
compilation in Triton's C++ passes or ptxas-bound LLVM, or a CUDA call, does (SIGALRM's Python handler
runs only once such code returns): the launcher blocks SIGALRM while it waits. Under a budget the
worker's own stop cannot end it; the parent must (``Budget.kill_at``). Used by
benchmarks/probe_overrun.py, which times it; no test waits for it."""

import signal
import time

import torch
import triton
import triton.language as tl

CALLS = []


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask), mask=mask)


def launch(x):
    if not CALLS:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        try:
            time.sleep(40.0)  # the part the alarm cannot interrupt
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})
    CALLS.append(1)
    out = torch.empty_like(x)
    double_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
    return out


def make_inputs(*, device, gen, n=777):
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    return 2.0 * x.double()
