"""Glue for the TorchInductor Triton convolution padding reproduction (repro.py beside this file).

launch_* compute a stride-1 2-D convolution of x [batch, channels, size, size] with
weight [out_channels, channels, k, k] and `padding` zeros on each side, with the buggy or
fixed bounds mask. padding=0 (the default) is where both versions agree; any padding > 0
shows the bug on the borders of the output.
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import repro  # noqa: E402


def launch_buggy(x, weight, padding):
    return repro.conv2d(x, weight, padding, fixed=False)


def launch_fixed(x, weight, padding):
    return repro.conv2d(x, weight, padding, fixed=True)


def make_inputs(*, device, gen, batch=2, channels=3, size=10, out_channels=8, k=3, padding=0):
    x = torch.randn(batch, channels, size, size, generator=gen)
    weight = torch.randn(out_channels, channels, k, k, generator=gen)
    return {"x": x.to(device), "weight": weight.to(device), "padding": padding}


def reference(x, weight, padding):
    # in float64: in float32 on a GPU, cuDNN's conv rounds its inputs to TF32 (torch.backends.cudnn.allow_tf32
    # is on by default), and the reference would be the one that is off (by 4e-4 at channels=2, k=1 on an H100)
    return torch.nn.functional.conv2d(x.double(), weight.double(), padding=padding)


FUZZ = {"batch": (1, 3), "channels": (1, 5), "size": (3, 16), "out_channels": (1, 20), "k": (1, 3), "padding": (0, 2)}
