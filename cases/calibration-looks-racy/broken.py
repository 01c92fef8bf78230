"""CALIBRATION: a global absmax with tl.atomic_max under @triton.autotune, no reset_to_zero. It is correct.

Per-tensor FP8 scaling needs ``amax = max(|x|)`` over the whole tensor. Each
program reduces its block with ``tl.max`` and folds the result into one fp32
scalar with ``tl.atomic_max``; the launcher zeroes the scalar first. ``BLOCK`` is
tuned, and there is no ``reset_to_zero=["amax_ptr"]``.

Everything about this looks like the traps next door. Thousands of programs update
one float with atomics in an unspecified order (``nrm2-atomics``: the sum comes out
different every run). The autotuner launches the kernel hundreds of times on the
caller's ``amax`` before the real launch, and nothing resets it in between
(``splitk-matmul-autotune``: the first call returns the product times the number of
launches).

Neither applies to ``max``. It is exact: the maximum of fp32 values is one of
them, with no rounding, so the order of the atomics cannot change a bit of the
result. And it is idempotent: ``max(m, m) = m``, so a benchmarking launch that
folds the same block maxima into an ``amax`` that already holds them leaves it
unchanged. The first call, the second call, every run: the same bits as
``x.abs().max()``. torchao's amax kernels rely on exactly this.
"""

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 4096}, num_warps=8),
    ],
    key=["n"],  # BUG: (calibration: not a bug) no reset_to_zero=["amax_ptr"], and none is needed: atomic_max is idempotent
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
