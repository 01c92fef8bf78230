"""Row max over logits past 2**31 elements: ``row * stride`` wraps around in int32.

The first pass of a softmax or cross-entropy kernel: one program per row finds the
row's max. The row's start is ``x_ptr + row * stride``. ``tl.program_id`` is int32,
and Triton passes a Python int that fits in 32 bits (here the stride, 128,256, a
Llama-3-sized vocabulary) as int32 too, so the product is computed in int32. For
16,896 tokens the logits hold 2,167,013,376 elements, a little past 2**31; from row
16,744 on, ``row * stride`` exceeds 2**31 - 1 and wraps to a negative number, about
-2**31. The last 152 rows are then read from about 4 GiB *before* the tensor.

What happens next depends on what is mapped there. If nothing is, the load faults
("an illegal memory access was encountered") and the CUDA context is lost; if some
other allocation is, the kernel reads it and returns plausible wrong maxima for the
last rows, without an error. Either way the first 16,744 rows are right, and every
test with fewer than 2**31 elements passes.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def row_max_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    row_ptr = x_ptr + row * stride  # BUG: int32 * int32: wraps negative once row * stride >= 2**31
    m = tl.full((BLOCK,), float("-inf"), dtype=tl.float16)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.load(row_ptr + cols, mask=cols < n_cols, other=float("-inf")))
    tl.store(out_ptr + row, tl.max(m, axis=0))


def row_max(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    row_max_kernel[(n_rows,)](x, out, x.stride(0), n_cols, BLOCK=1024)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
