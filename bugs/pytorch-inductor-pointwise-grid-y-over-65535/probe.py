"""Glue for the TorchInductor 2-D pointwise grid reproduction (repro.py beside this file).

launch_* run the autotuned transposing copy out[x, y] = a[y, x] with the block shapes of
the buggy or fixed heuristic. The trigger is a wide x (256) and more than 4 * 65,535 rows:
the (256, 4) tile then needs more than 65,535 programs on grid axis 1, which a GPU refuses
(the interpreter has no such limit, so there both versions give the right result).
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import repro  # noqa: E402


def launch_buggy(a):
    return repro.transpose_copy(a, torch.empty(a.shape[1], a.shape[0], dtype=a.dtype, device=a.device), False)


def launch_fixed(a):
    return repro.transpose_copy(a, torch.empty(a.shape[1], a.shape[0], dtype=a.dtype, device=a.device), True)


def make_inputs(*, device, gen, rows=1000, cols=256):
    return {"a": torch.randn(rows, cols, generator=gen).to(device)}


def reference(a):
    return a.t().contiguous()


FUZZ = {"rows": (1, 3000), "cols": (1, 600)}
GPU_SIZES = {"rows": 300_000, "cols": 256}
