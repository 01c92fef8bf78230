"""Inputs and reference for atomic-accumulator-empty: the sum of one fp32 vector.

The launcher writes the total into ``out``, a one-element tensor its caller allocated
with ``torch.empty``: memory that holds whatever was there before. The harness fills
``out`` with 1000.0 (``output(..., canary=1000.0)``) to stand for that leftover, the
way the caching allocator hands back a block that last held some other tensor's value.
On a real run the leftover is often 0 (fresh memory), which is exactly why the bug
passes tests; here it is never 0, so it shows on every run.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, n):
    return {
        "x": guarded(torch.randn(n, generator=gen), device),
        "out": output((1,), torch.float32, device, canary=1000.0),  # what torch.empty left there
    }


def reference(x):
    return x.double().sum().reshape(1)
