"""A window copy whose mask joins two conditions with Python's ``and`` (and one with
``not``): compiled Triton makes them element-wise; the plain interpreter dropped one."""

import torch
import triton
import triton.language as tl


@triton.jit
def window_kernel(x_ptr, out_ptr, n, lo, hi, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = (offs < n) and (offs >= 0)
    keep = (offs >= lo) and (offs < hi)
    x = tl.load(x_ptr + offs, mask=inside)
    tl.store(out_ptr + offs, tl.where(not keep, 0.0, x), mask=inside)


def launch(x, lo, hi):
    out = torch.empty_like(x)
    window_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), lo, hi, BLOCK=128)
    return out


def make_inputs(*, device, gen, n=300):
    return {"x": torch.randn(n, generator=gen).to(device), "lo": n // 3, "hi": n // 2}


def reference(x, lo, hi):
    out = torch.zeros_like(x, dtype=torch.float64)
    out[lo:hi] = x[lo:hi].double()
    return out
