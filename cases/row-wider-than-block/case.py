"""Inputs and reference for row-wider-than-block: per-row FP8 scales, amax(|x|) / 448.

x is (rows, cols) fp32 with cols wider than the kernel's 8192-column block (18432,
DeepSeek-V3's MLP width), and padding between rows. The scales sit in canary
padding. max is exact, so the comparison is exact too.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, rows, cols):
    return {
        "x": guarded(torch.randn(rows, cols, generator=gen), device, row_pad=16),
        "scale": output((rows,), torch.float32, device),
    }


def reference(x):
    return x.double().abs().amax(dim=1) / 448.0
