"""Inputs and reference for conv2d-channel-mask: a 'same' 3x3 conv, stride 1, fp32, channels-last.

x is (N, H, W, C_IN), w is (KH, KW, C_IN, C_OUT), out is (N, H, W, C_OUT), all
contiguous. C_OUT is not a multiple of the channel block. x and w sit inside NaN
padding and out inside canary padding: the channel tail of the last filter row
reads NaN, and the channel tail of the last output pixel writes over canaries.
"""

import torch
import torch.nn.functional as F

from harness.buffers import guarded, output


def make_inputs(*, device, gen, n, h, w, c_in, c_out, k=3):
    return {
        "x": guarded(torch.randn(n, h, w, c_in, generator=gen), device),
        "w": guarded(torch.randn(k, k, c_in, c_out, generator=gen), device),
        "out": output((n, h, w, c_out), torch.float32, device),
    }


def reference(x, w):
    y = F.conv2d(x.double().permute(0, 3, 1, 2), w.double().permute(3, 2, 0, 1), padding=w.shape[0] // 2)
    return y.permute(0, 2, 3, 1)
