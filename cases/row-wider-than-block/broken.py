"""Per-token absmax for FP8 quantization, one block per row: rows wider than the block are cut short.

Per-token (row-wise) FP8 quantization needs each row's absolute maximum: the
scale is ``amax / 448`` for ``float8_e4m3``. The kernel holds a whole row in one
block: ``tl.arange(0, BLOCK)``, a mask ``cols < n_cols``, one ``tl.max``. The
launcher rounds the width up to a power of two and caps it, because a block of
tens of thousands of fp32 values spills registers: ``BLOCK = min(next_pow2(n_cols),
8192)``. Layer norm kernels in xformers and the Triton tutorial use the same cap
(``65536 // element_size``), and raise an error when the row is wider than it.

This one does not. For a row of 18432 (DeepSeek-V3's MLP width) ``BLOCK`` is 8192:
the mask keeps every load in bounds, ``tl.max`` reduces the first 8192 columns, and
the other 10240 never enter the maximum. Nothing reads out of bounds, nothing is
left unwritten: the scale is simply too small for every row whose largest value
lies past column 8192 (more than half of them, for random data), and quantizing
with it would saturate those values.
"""

import torch
import triton
import triton.language as tl

MAX_BLOCK = 8192  # more than this spills registers


@triton.jit
def token_amax_kernel(x_ptr, scale_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)  # BUG: only the first BLOCK columns of the row
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)  # BUG: one block, no loop over the rest
    amax = tl.max(tl.abs(x), axis=0)  # BUG: the maximum of the first block, not of the row
    tl.store(scale_ptr + row, amax / 448.0)


def token_scales(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    BLOCK = min(triton.next_power_of_2(n_cols), MAX_BLOCK)
    token_amax_kernel[(n_rows,)](x, scale, n_cols, x.stride(0), BLOCK=BLOCK)
    return scale


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
