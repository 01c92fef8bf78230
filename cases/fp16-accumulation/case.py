"""Inputs and reference for fp16-accumulation: the mean of each row of an fp16 matrix.

Values are uniform in [0, 1) (activations after a sigmoid, pixel intensities), and
each row holds 512 * 512 = 262,144 of them, as in global average pooling over a
512 x 512 feature map: a row sums to about 131,000, twice the largest fp16 (65504),
while the mean (about 0.5) is an ordinary fp16 number.

The reference is the mean in float64. Tolerance: rtol = 1e-3, about two fp16 ulps at
0.5; a correct kernel's only sizeable error is the final rounding to fp16 (at most
half an ulp, 4.9e-4 relative).
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, rows, cols):
    return {
        "x": guarded(torch.rand(rows, cols, generator=gen).half(), device),
        "out": output((rows,), torch.float16, device),
    }


def reference(x):
    return x.double().mean(dim=1)
