"""Inputs and reference for empty-input: row sums of a matrix with no rows.

``x`` has shape ``(n_rows, n_cols)`` and the result is the sum of each row, shape
``(n_rows,)``. The case runs with ``n_rows = 0`` on both backends, an empty batch: a
data-parallel rank with no requests this step, a bucket with no sequences, the last
micro-batch of an epoch that came out empty. The right answer is an empty tensor.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, n_rows, n_cols):
    return {
        "x": guarded(torch.randn(n_rows, n_cols, generator=gen), device, row_pad=16),
        "out": output((n_rows,), torch.float32, device),
    }


def reference(x):
    return x.double().sum(dim=1)
