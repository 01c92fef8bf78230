"""Inputs and reference for calibration-looks-racy: amax = max(|x|) over a whole fp32 tensor.

n is prime (the last block is partial) and large enough for many programs per
launch. x sits inside NaN padding, so a load past the end would make amax NaN. The
maximum is exact, so the comparison is exact: rtol = atol = 0.
"""

import torch

from harness.buffers import guarded


def make_inputs(*, device, gen, n):
    return {"x": guarded(torch.randn(n, generator=gen), device)}


def reference(x):
    return x.double().abs().max().reshape(1)
