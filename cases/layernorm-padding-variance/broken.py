"""Layer norm whose variance counts the padding lanes: ``(0 - mean)**2`` for each.

One program normalises one row, and the whole row fits in one block:
``BLOCK_SIZE = next_power_of_2(N)``. When ``N`` is not a power of two (768, 1600,
5120 and most hidden sizes that are not), the lanes past the end of the row are
masked and loaded as 0. For the mean that is fine: zeros add nothing to the sum, and
the sum is divided by ``N``, not by ``BLOCK_SIZE``. The variance is where it goes
wrong. Centring happens on the whole block, so every padding lane becomes
``0 - mean = -mean``, and its square goes into the sum:

    var_computed = var + (BLOCK_SIZE - N) / N * mean**2

``rstd`` comes out too small and every output is squeezed towards the bias. The size
of the error depends on the data: on zero-mean test inputs (``torch.randn``) the
extra term is about ``(BLOCK_SIZE - N) / N**2`` and hides inside a loose tolerance;
on activations with a real offset it is as large as the variance itself. The same
kernel is right for ``N = 1024`` and wrong for ``N = 768``.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(X, Y, W, B, stride_x, stride_y, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_SIZE)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = x - mean  # BUG: padding lanes become 0 - mean, and each adds mean**2 to the variance
    var = tl.sum(xc * xc, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    w = tl.load(W + cols, mask=mask)
    b = tl.load(B + cols, mask=mask)
    y = xc * rstd * w + b
    tl.store(Y + row * stride_y + cols, y, mask=mask)


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, out: torch.Tensor, eps: float) -> torch.Tensor:
    M, N = x.shape
    BLOCK_SIZE = triton.next_power_of_2(N)
    num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
    layer_norm_kernel[(M,)](x, out, weight, bias, x.stride(0), out.stride(0), N, eps,
                            BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
