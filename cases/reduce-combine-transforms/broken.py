"""Per-row int8 quantization whose absolute maximum is a ``tl.reduce`` with a combine that takes the abs.

One program per row; the row is loaded in one block of ``next_power_of_2(n_cols)`` lanes,
its largest magnitude ``amax`` gives the row's scale ``amax / 127``, and every element
becomes the int8 code ``round(x / scale)``. To find ``amax`` in one pass the kernel hands
``tl.reduce`` a combine function that compares the magnitudes of its two operands and
keeps the larger: ``tl.maximum(tl.abs(a), tl.abs(b))``. It reads like "the abs-max of two
values", and at every width from 2 on it gives the right answer: each element meets the
combine function at least once and has its sign dropped there.

A combine function is not a map. ``tl.reduce`` only ever calls it to merge two values it
already holds; an element that never needs merging is returned as it was loaded. A row
of one element (a column vector: ``n_cols = 1``, so ``BLOCK = 1``, one lane and no
padding) is never merged with anything: its "absolute maximum" is the element itself.
For a negative element the scale comes out negative, ``x / scale`` is +127 where it
should be -127, and every negative row of the column gets the code of its opposite.
The code times the scale is still ``x`` (both signs flipped), so a round-trip test
passes; whatever reads the codes or the scale on its own does not.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def abs_max(a, b):
    return tl.maximum(tl.abs(a), tl.abs(b))  # BUG: transforms its operands: a value tl.reduce never merges keeps its sign


@triton.jit
def quantize_rows_kernel(x_ptr, q_ptr, scale_ptr, stride_x, stride_q, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    amax = tl.reduce(x, 0, abs_max)  # BUG: over a row of one element the combine never runs: amax is x, sign and all
    scale = amax / 127.0
    q = x / scale
    q = tl.where(q >= 0, q + 0.5, q - 0.5)  # round half away from zero (the cast below truncates)
    tl.store(q_ptr + row * stride_q + cols, q.to(tl.int8), mask=mask)
    tl.store(scale_ptr + row, scale)


def quantize_rows(x: torch.Tensor, q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    quantize_rows_kernel[(n_rows,)](x, q, scale, x.stride(0), q.stride(0), n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return q


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
