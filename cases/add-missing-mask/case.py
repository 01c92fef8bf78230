"""Inputs and reference for add-missing-mask: out = x + y for fp32 vectors.

n is not a multiple of the block size. x and y sit inside NaN padding and out
inside canary padding, so a kernel that runs past the end reads NaN and leaves
marks in the canaries, on the GPU and under the interpreter alike.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, n):
    return {
        "x": guarded(torch.randn(n, generator=gen), device),
        "y": guarded(torch.randn(n, generator=gen), device),
        "out": output((n,), torch.float32, device),
    }


def reference(x, y):
    return x.double() + y.double()


def torch_equivalent(x, y, out):
    return torch.add(x, y, out=out)


def bench_work(x, y, out):
    return 3 * x.numel() * x.element_size()  # read x and y, write out
