"""Layer norm that zeroes the padding lanes after centring, as Triton's tutorial does.

``tl.where(mask, x - mean, 0.0)`` puts the padding lanes back to 0 after the mean is
subtracted, so they add nothing to the variance, and nothing to ``y`` either (whose
padding lanes the masked store throws away in any case).
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
    xc = tl.where(mask, x - mean, 0.0)  # FIX: padding lanes stay 0 after centring
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
