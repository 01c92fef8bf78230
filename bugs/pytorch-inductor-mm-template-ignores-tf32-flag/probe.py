"""Glue for the TorchInductor fused-matmul TF32 reproduction (repro.py beside this file).

launch_* compute relu(a @ b) for float32 a [m, k] and b [k, n] with the buggy template
(tl.dot at Triton's default, TF32) or the fixed one (tl.dot at the precision PyTorch's
torch.backends.cuda.matmul setting asks for, full float32 by default). The reference is
float64. Under the interpreter the probe rounds the operands of a TF32 dot to TF32, as a
GPU does (unless --no-tf32). Every float32 input shows the bug: TF32 operands are off by
up to 2**-11 relative, far outside the float32 tolerance (rtol 1e-4).
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import repro  # noqa: E402


def launch_buggy(a, b):
    return repro.mm_relu(a, b, fixed=False)


def launch_fixed(a, b):
    return repro.mm_relu(a, b, fixed=True)


def make_inputs(*, device, gen, m=64, n=64, k=64):
    return {"a": torch.randn(m, k, generator=gen).to(device), "b": torch.randn(k, n, generator=gen).to(device)}


def reference(a, b):
    return torch.relu(a @ b)


FUZZ = {"m": (1, 200), "n": (1, 200), "k": (1, 300)}
