"""Inputs and reference for padding-division-by-zero: the mean importance ratio per sequence.

``p`` and ``q`` hold the probabilities that the current and the old policy give each
token of a sequence (as in a PPO-style loss), one sequence per row; the result is the
mean of ``p / q`` over each row. Probabilities are in (0.05, 1], so every real ratio is
finite. ``n_cols`` is not a power of two, so each row's block has padding lanes; the
inputs have NaN padding between their rows (``row_pad``) and ``out`` holds a canary.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, n_rows, n_cols):
    p = 0.05 + 0.95 * torch.rand(n_rows, n_cols, generator=gen)
    q = 0.05 + 0.95 * torch.rand(n_rows, n_cols, generator=gen)
    return {
        "p": guarded(p, device, row_pad=16),
        "q": guarded(q, device, row_pad=16),
        "out": output((n_rows,), torch.float32, device),
    }


def reference(p, q):
    return (p.double() / q.double()).mean(dim=1)
