"""Per-row int8 quantization that takes the abs first and reduces the magnitudes with ``tl.max``.

The transform goes before the reduction, where it reaches every element, including the
only element of a row of width 1; the reduction then merges values of one kind
(magnitudes) with an operator that only merges them (``max``). Any combine function
handed to ``tl.reduce`` or ``tl.associative_scan`` should be of that kind: what it
returns for ``(a, b)`` is what ``a`` and ``b`` together stand for, not a function of them.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def quantize_rows_kernel(x_ptr, q_ptr, scale_ptr, stride_x, stride_q, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    amax = tl.max(tl.abs(x), axis=0)  # FIX: the abs reaches every element, then the max only merges magnitudes
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
