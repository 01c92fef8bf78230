"""Inputs and reference for grid-ignores-meta: out = silu(x) = x * sigmoid(x), fp32.

x sits inside NaN padding and out inside canary padding, so the harness reports the
elements of out that no program wrote. n is prime, so the last block is partial.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, n):
    return {
        "x": guarded(torch.randn(n, generator=gen), device),
        "out": output((n,), torch.float32, device),
    }


def reference(x):
    x = x.double()
    return x * torch.sigmoid(x)
