"""Inputs and reference for c-style-division-negative: ``torch.roll`` of a vector.

``out[i] = x[(i - shift) mod n]``: the vector rotated right by ``shift`` places, as
``torch.roll(x, shift)`` does. ``shift`` is positive and smaller than ``n``, so the
first ``shift`` outputs come from the end of ``x``, through an index ``i - shift`` that
is negative. ``x`` sits inside NaN padding wider than ``shift`` (``harness.buffers``),
so an index that lands before the start of ``x`` reads NaN deterministically, on the
GPU and under the interpreter; ``out`` holds a canary.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, n, shift):
    return {
        "x": guarded(torch.randn(n, generator=gen), device),
        "out": output((n,), torch.float32, device),
        "shift": shift,
    }


def reference(x, shift):
    return torch.roll(x.double(), shift)
