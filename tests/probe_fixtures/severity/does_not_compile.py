"""tl.arange over 100 elements: not a power of 2, so Triton refuses to compile the kernel."""

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr):
    offs = tl.arange(0, 100)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


def launch(x):
    out = torch.empty_like(x)
    copy_kernel[(1,)](x, out)
    return out


def make_inputs(*, device, gen, n=100):
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    return x.double()
