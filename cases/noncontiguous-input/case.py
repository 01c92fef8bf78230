"""Inputs and reference for noncontiguous-input: out = alpha * x for a transposed x.

``x`` is ``a.t()`` for a contiguous ``a`` of shape (cols, rows): shape (rows, cols),
strides (1, rows), the layout you get from ``weight.t()``, ``x.transpose(-1, -2)`` or
``x.mT`` without a ``.contiguous()``. ``a`` sits in NaN padding; ``out`` is an
ordinary contiguous (rows, cols) tensor filled with a canary. ``alpha`` is a power of
two, so the product is exact and any difference is a misplaced element.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, rows, cols):
    a = guarded(torch.randn(cols, rows, generator=gen), device)
    return {
        "x": a.t(),  # a view: no copy, strides (1, rows)
        "out": output((rows, cols), torch.float32, device),
        "alpha": 0.5,
    }


def reference(x, alpha):
    return x.double() * alpha
