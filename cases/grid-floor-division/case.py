"""Inputs and reference for grid-floor-division: out = x + y for fp32 vectors.

n is not a multiple of the block size (1024), so a grid that rounds down leaves a
tail. ``out`` is filled with a canary, so elements that no program wrote still hold
it afterwards and the harness reports them as unwritten. (With ``torch.empty`` they
would hold stale memory, which may even happen to look right.)
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
