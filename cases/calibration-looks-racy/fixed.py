"""CALIBRATION: the same absmax with the reset_to_zero a reviewer would ask for. It changes nothing.

``reset_to_zero=["amax_ptr"]`` zeroes ``amax`` before every benchmarking launch and
once more before the real launch after tuning. For an accumulating atomic
(``atomic_add``) that is the fix. For ``atomic_max`` it only costs a ``zero_()`` per
timed launch: the result was already the same bits without it.
"""

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 4096}, num_warps=8),
    ],
    key=["n"],
    reset_to_zero=["amax_ptr"],  # FIX: (calibration: no effect) the defensive reset; the result is bitwise the same
)
@triton.jit
def amax_kernel(x_ptr, amax_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_max(amax_ptr, tl.max(tl.abs(x), axis=0))


def amax(x: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    out = torch.zeros(1, device=x.device, dtype=torch.float32)  # |x| >= 0, so 0 is the identity of max here
    amax_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
