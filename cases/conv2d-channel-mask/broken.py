"""Direct conv2d with a block of output channels and no channel mask: the last block runs past C_OUT.

A 'same' 3x3 convolution, stride 1, in channels-last layouts: ``x`` is (N, H, W,
C_IN), the filter ``w`` is (KH, KW, C_IN, C_OUT) (TensorFlow's HWIO), ``out`` is
(N, H, W, C_OUT). Each program computes a tile of ``BLOCK_P`` output pixels by
``BLOCK_CO`` output channels as a sum of outer products: for every filter tap and
input channel, one pixel column of ``x`` times one row of ``w``.

The pixel axis is masked, including the halo where the filter hangs over the image
edge. The channel axis is not: with C_OUT = 40 and BLOCK_CO = 32 the second channel
block covers channels 32..63, of which 40..63 do not exist. Its weight loads read
past the end of each filter row (which, in HWIO, is the start of the next row, and
for the last row the end of ``w``: here NaN), and its store writes 24 channels past
the end of each output pixel, over the first 24 channels of the *next* pixel, which
another program owns. Whether that program's correct value or this garbage lands
last is a race on a GPU; under the interpreter the order is fixed. The very last
pixel's overrun lands past the end of ``out``.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def conv2d_kernel(x_ptr, w_ptr, out_ptr, N, H, W, C_IN, C_OUT,
                  KH: tl.constexpr, KW: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_CO: tl.constexpr):
    offs_p = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)  # output pixels, over N*H*W
    offs_co = tl.program_id(1) * BLOCK_CO + tl.arange(0, BLOCK_CO)  # output channels
    n = offs_p // (H * W)
    oh = (offs_p // W) % H
    ow = offs_p % W
    p_mask = offs_p < N * H * W

    acc = tl.zeros((BLOCK_P, BLOCK_CO), dtype=tl.float32)
    for kh in range(KH):
        for kw in range(KW):
            ih = oh + kh - KH // 2
            iw = ow + kw - KW // 2
            x_mask = p_mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            x_pix = x_ptr + ((n * H + ih) * W + iw) * C_IN
            w_tap = w_ptr + (kh * KW + kw) * C_IN * C_OUT
            for ci in range(C_IN):
                x = tl.load(x_pix + ci, mask=x_mask, other=0.0)
                w = tl.load(w_tap + ci * C_OUT + offs_co)  # BUG: no mask: channels past C_OUT read the next row
                acc += x[:, None] * w[None, :]

    out_ptrs = out_ptr + (offs_p * C_OUT)[:, None] + offs_co[None, :]
    tl.store(out_ptrs, acc, mask=p_mask[:, None])  # BUG: masks pixels only: channels past C_OUT hit the next pixel


def conv2d(x: torch.Tensor, w: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    N, H, W, C_IN = x.shape
    KH, KW, _, C_OUT = w.shape
    assert x.is_contiguous() and w.is_contiguous() and out.is_contiguous()
    grid = (triton.cdiv(N * H * W, 64), triton.cdiv(C_OUT, 32))
    conv2d_kernel[grid](x, w, out, N, H, W, C_IN, C_OUT, KH=KH, KW=KW, BLOCK_P=64, BLOCK_CO=32, num_warps=4)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
