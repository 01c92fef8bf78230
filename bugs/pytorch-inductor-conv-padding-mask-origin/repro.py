"""Reproduction (our own code) of TorchInductor's Triton convolution before and after
pytorch/torchdynamo#605 (torchinductor/triton_ops/conv.py, July 2022).

The kernel is an implicit GEMM: rows are output pixels (n, oh, ow), columns of the
reduction are (c, r, s) taps, and a launcher-built table gives each tap's offset inside
the input. Each output pixel's input origin is (oh * stride - pad, ow * stride - pad);
tap (r, s) reads row origin_h + r and column origin_w + s. The bounds mask must test that
tapped position. Before the fix it tested the origin alone: with padding > 0 the first
output rows and columns (origin -pad < 0) lost every tap, real pixels included, and
interior pixels near the far edge read the next row (or past the image) where the
padding zeros belong. The fix splits the tap table into its h, w and c parts and masks on
origin + tap offset.

Both sides load masked lanes with other=0.0 and multiply in IEEE float32, so that only
the mask differs (upstream added other= in pytorch/torchdynamo#707, and its tl.dot
was TF32 by default: separate bugs).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _conv2d_nchw(x, w, y, dh_ptr, dw_ptr, dc_ptr,
                 BATCH, IN_C, IN_H, IN_W, OUT_C, OUT_H, OUT_W, CRS, pad_h, pad_w,
                 sxn, sxc, sxh, sxw, swn, syn, syc, syh, syw,
                 FIXED: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)  # output pixels
    k = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)  # output channels
    n = m // (OUT_H * OUT_W)
    oh = (m % (OUT_H * OUT_W)) // OUT_W
    ow = m % OUT_W
    ih0 = oh - pad_h  # stride 1
    iw0 = ow - pad_w
    base = n * sxn + ih0 * sxh + iw0 * sxw
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for t0 in range(0, CRS, BLOCK_K):
        t = t0 + tl.arange(0, BLOCK_K)
        tmask = t < CRS
        dh = tl.load(dh_ptr + t, mask=tmask, other=0)
        dw = tl.load(dw_ptr + t, mask=tmask, other=0)
        dc = tl.load(dc_ptr + t, mask=tmask, other=0)
        offs = base[:, None] + (dh * sxh + dw * sxw + dc * sxc)[None, :]
        if FIXED:
            ih = ih0[:, None] + dh[None, :]
            iw = iw0[:, None] + dw[None, :]
            mask_x = (n < BATCH)[:, None] & tmask[None, :] & (ih >= 0) & (ih < IN_H) & (iw >= 0) & (iw < IN_W)
        else:
            # BUG: bounds tested at the pixel's origin (oh - pad, ow - pad), not at origin + tap offset
            mask_x = ((n < BATCH) & (ih0 >= 0) & (ih0 < IN_H) & (iw0 >= 0) & (iw0 < IN_W))[:, None] & tmask[None, :]
        a = tl.load(x + offs, mask=mask_x, other=0.0)
        b = tl.load(w + t[:, None] + k[None, :] * swn, mask=tmask[:, None] & (k < OUT_C)[None, :], other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    out = y + (n * syn + oh * syh + ow * syw)[:, None] + k[None, :] * syc
    tl.store(out, acc, mask=(n < BATCH)[:, None] & (k < OUT_C)[None, :])


def conv2d(x, weight, padding, fixed, BLOCK_M=32, BLOCK_N=16, BLOCK_K=16):
    """conv2d(x [N, C, H, W], weight [K, C, R, S]), stride 1, dilation 1, one group, no bias."""
    N, C, H, W = x.shape
    K, _, R, S = weight.shape
    OH, OW = H + 2 * padding - R + 1, W + 2 * padding - S + 1
    y = torch.empty((N, K, OH, OW), dtype=x.dtype, device=x.device)
    # the launcher's tap table: for reduction index t = (c, r, s), the tap's h, w and c offsets
    t = torch.arange(C * R * S, device=x.device)
    dh = ((t // S) % R).to(torch.int32)
    dw = (t % S).to(torch.int32)
    dc = (t // (R * S)).to(torch.int32)
    wk = weight.reshape(K, C * R * S).contiguous()  # weight columns in (c, r, s) order
    grid = (triton.cdiv(N * OH * OW, BLOCK_M), triton.cdiv(K, BLOCK_N))
    _conv2d_nchw[grid](x, wk, y, dh, dw, dc, N, C, H, W, K, OH, OW, C * R * S, padding, padding,
                       x.stride(0), x.stride(1), x.stride(2), x.stride(3), wk.stride(0),
                       y.stride(0), y.stride(1), y.stride(2), y.stride(3),
                       FIXED=fixed, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return y
