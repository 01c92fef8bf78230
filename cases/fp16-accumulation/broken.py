"""Row mean with an fp16 accumulator: the sum overflows although every value and the mean are small.

Each program averages one row of an fp16 matrix: it walks the row in blocks of
``BLOCK``, adds each block into a ``BLOCK``-wide accumulator, then reduces the
accumulator and divides by the row length. The accumulator was made fp16 to match
the input (``dtype=x.dtype`` is the usual way this happens). The largest fp16 is
65504, and a row of 262,144 values in ``[0, 1)`` (global average pooling over a
512 x 512 feature map, say) sums to about 131,000. The sum overflows to ``inf``
and so does the mean, though the mean is 0.5 and fits fp16 easily.

Overflow is the loud end of the problem. Below it fp16 keeps 11 significant bits:
once a running sum is about 2048 times larger than the terms added to it, each
addition rounds away (an fp16 sum of ones stops at 2048), and ``tl.sum`` of an fp16
block also adds in fp16 on the GPU. Accumulate in fp32 and cast once, at the end.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def row_mean_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float16)  # BUG: the running sum needs fp32's range and precision, not fp16's
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / n_cols
    tl.store(out_ptr + row, mean.to(out_ptr.dtype.element_ty))


def row_mean(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    row_mean_kernel[(n_rows,)](x, out, x.stride(0), n_cols, BLOCK=1024)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
