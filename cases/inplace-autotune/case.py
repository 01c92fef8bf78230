"""Inputs and reference for inplace-autotune: x += y for fp32 vectors, in place.

The harness computes the reference from the inputs as they are just before each
call, so the second call is checked against the ``x`` the first call left behind.
x and y sit inside NaN padding; n is prime, so the last block is partial.
"""

import torch

from harness.buffers import guarded


def make_inputs(*, device, gen, n):
    return {
        "x": guarded(torch.randn(n, generator=gen), device),
        "y": guarded(torch.randn(n, generator=gen), device),
    }


def reference(x, y):
    return x.double() + y.double()
