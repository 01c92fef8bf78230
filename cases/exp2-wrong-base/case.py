"""Inputs and reference for exp2-wrong-base: the log-sum-exp of each row, in natural log.

Each row holds attention-like scores (``randn`` scaled by 2) over ``n_cols`` keys; the
result is ``torch.logsumexp`` of the row, the natural-log statistic that attention
kernels return as ``lse`` and that merging partial attention results relies on. Rows
have NaN padding between them (``row_pad``); ``out`` holds a canary.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, n_rows, n_cols):
    return {
        "x": guarded(2.0 * torch.randn(n_rows, n_cols, generator=gen), device, row_pad=16),
        "out": output((n_rows,), torch.float32, device),
    }


def reference(x):
    return torch.logsumexp(x.double(), dim=1)
