"""Inputs and reference for softmax-mask-fill-zero: row softmax of an fp32 matrix.

``n_cols`` is not a power of two, so each row's block has padding lanes. The logits
are mostly negative (``randn - 6``, as after subtracting a large bias or with
log-probabilities as input), so a padding lane loaded as 0 is larger than every real
logit and the bug is large rather than subtle. ``x`` has NaN padding between its rows
(``row_pad``), so a kernel that ignored the row stride, or let its masked lanes read,
would show NaN; ``out`` is filled with a canary, so skipped elements show too.

``row_pad`` is an argument so that ``bench`` can ask for contiguous rows: PyTorch's
softmax copies a non-contiguous input first, which would not be a fair race.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, n_rows, n_cols, row_pad=16):
    x = torch.randn(n_rows, n_cols, generator=gen) - 6.0
    return {
        "x": guarded(x, device, row_pad=row_pad),
        "out": output((n_rows, n_cols), torch.float32, device),
    }


def reference(x):
    return torch.softmax(x.double(), dim=1)


def torch_equivalent(x, out):
    return torch.softmax(x, dim=1)


def bench_work(x, out):
    return 2 * x.numel() * x.element_size()  # read x, write out
