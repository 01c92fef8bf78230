"""Vector add without a mask: the tutorial kernel with the one line that matters removed.

The grid is ``cdiv(n, BLOCK)``, so the last program covers ``BLOCK`` offsets of which
only ``n % BLOCK`` exist. With no ``mask=`` its ``tl.load`` reads past the end of
``x`` and ``y`` and its ``tl.store`` writes past the end of ``out``. Nothing
complains: on a GPU the extra reads return whatever the caching allocator left
there and the extra writes land in a neighbouring tensor; under the interpreter they
touch raw host memory (and can segfault). Every element of ``out`` that exists is
right, which is why this bug survives tests that only compare ``out`` with
``x + y``.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # BUG: no mask, reads past the end of x
    y = tl.load(y_ptr + offs)  # BUG: no mask, reads past the end of y
    tl.store(out_ptr + offs, x + y)  # BUG: no mask, writes past the end of out


def add(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
