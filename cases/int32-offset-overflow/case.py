"""Inputs and reference for int32-offset-overflow: the max of each row of fp16 logits.

On the GPU the logits are 16,896 x 128,256 fp16 (2,167,013,376 elements, 4.3 GB):
16,896 tokens over a 128,256-entry vocabulary, just past 2**31 elements. Drawing
2.2 billion normals would dominate the run, so each row is a shared row of noise
plus a per-row shift, both drawn with ``gen``: cheap to build, and the maxima
differ from row to row. The tensor is built on the CPU and then placed on the device.

The reference is ``amax`` per row, which is exact, so the comparison is exact too.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, rows, cols):
    shift = 4.0 * torch.randn(rows, 1, generator=gen)
    noise = torch.randn(1, cols, generator=gen)
    logits = shift.half() + noise.half()  # (rows, cols) fp16, materialised on the CPU
    return {
        "x": guarded(logits, device),
        "out": output((rows,), torch.float16, device),
    }


def reference(x):
    return x.amax(dim=1)
