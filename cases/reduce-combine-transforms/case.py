"""Inputs and reference for reduce-combine-transforms: per-row int8 quantization of a column vector.

``x`` is ``(n_rows, n_cols)`` float32 from ``randn``, so about half of its rows start with a
negative value; the case's sizes give it one column (a column vector: ``BLOCK =
next_power_of_2(1) = 1``), the only width at which the broken kernel's combine function is
never called. Each row's scale is its largest magnitude over 127 and each code is
``round(x / scale)``; the reference computes the codes in float64. The codes are compared
within one step (the kernel divides in float32 and rounds half away from zero, torch rounds
half to even); a row of one element has the code -127 or 127 exactly. ``x`` has NaN padding
between its rows (``row_pad``), so a kernel that read past a row would show it; ``q`` and
``scale`` are filled with canaries, so an element left unwritten shows too.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, n_rows, n_cols):
    return {
        "x": guarded(torch.randn(n_rows, n_cols, generator=gen), device, row_pad=16),
        "q": output((n_rows, n_cols), torch.int8, device),
        "scale": output((n_rows,), torch.float32, device),
    }


def reference(x):
    x = x.double()
    scale = x.abs().amax(dim=1, keepdim=True) / 127.0
    return torch.round(x / scale)
