"""Inputs and reference for grid-y-over-65535: every row of x scaled by its own factor.

``out[r, c] = x[r, c] * scale[r]``: dequantising per-row-scaled activations, or
applying a per-(batch, head) factor, with the rows flattened from batch x heads. On
the GPU there are 70,000 rows of 200 columns (14 M elements, 56 MB): few elements,
but more rows than a CUDA grid's y dimension can count (65,535). The interpreter
size is small enough to run in a second, and far below the limit.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, rows, cols):
    return {
        "x": guarded(torch.randn(rows, cols, generator=gen), device, row_pad=16),
        "scale": guarded(torch.rand(rows, generator=gen) + 0.5, device),
        "out": output((rows, cols), torch.float32, device),
    }


def reference(x, scale):
    return x.double() * scale.double()[:, None]
