"""Vector add with a mask on every load and store of the last, partial block."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n  # FIX: true only for offsets that exist; the last block is partial
    x = tl.load(x_ptr + offs, mask=mask)  # FIX: no reads past the end of x
    y = tl.load(y_ptr + offs, mask=mask)  # FIX: nor of y
    tl.store(out_ptr + offs, x + y, mask=mask)  # FIX: no writes past the end of out


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
