"""Fused row softmax whose padding lanes are loaded as 0 instead of -inf.

This is the kernel of Triton's fused-softmax tutorial: one program per row, and
``BLOCK_SIZE = next_power_of_2(n_cols)`` so that a whole row fits in one block. When
``n_cols`` is not a power of two the block is wider than the row, and the lanes past
the end are masked. A masked ``tl.load`` does not make those lanes disappear: they
take the value ``other`` and then go through ``tl.max`` and ``tl.sum`` like the rest.

``other=0.0`` looks harmless (it is the right neutral value for a sum), but softmax
reduces twice, and 0 is neutral for neither reduction:

- the row max becomes ``max(row, 0)``: wrong whenever every logit is negative;
- every padding lane adds ``exp(0 - max)`` to the denominator, so each output is
  divided by too much. With logits below zero that is ``1`` per padding lane, which
  can dwarf the real sum.

The store is masked, so the padding lanes' own outputs are thrown away and nothing is
written out of bounds; every stored value is simply too small. With a power-of-two
``n_cols`` there are no padding lanes and the kernel is right, which is how it passes
a test at 1024 columns and fails at 1000.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    row = tl.load(in_ptr + row_idx * in_row_stride + col_offsets, mask=mask, other=0.0)  # BUG: 0 enters the max and the sum
    row_minus_max = row - tl.max(row, axis=0)
    numerator = tl.exp(row_minus_max)
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row_idx * out_row_stride + col_offsets, numerator / denominator, mask=mask)


def softmax(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 4
    if BLOCK_SIZE >= 2048:
        num_warps = 8
    if BLOCK_SIZE >= 4096:
        num_warps = 16
    softmax_kernel[(n_rows,)](out, x, x.stride(0), out.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
