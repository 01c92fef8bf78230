"""Glue for xformers.ops.rms_norm (Triton RMSNorm over the last dimension).

The project's own rms_norm() is called. xformers/__init__ (which loads the C++ library) is not
run: the package is given with only _is_triton_available.
"""

import sys
import types
from pathlib import Path

import torch

from harness.bugs.manifest import read
from harness.bugs.source import cuda_device_on_cpu, fetch, load

EPS = 1e-6


def _mod(variant):
    entry = read(Path(__file__).resolve().parent)
    side = entry.side(variant)
    where = fetch(side["package"], side["version"], entry.files, entry.pip_args)
    if "xformers" not in sys.modules:  # the package without its __init__
        pkg = types.ModuleType("xformers")
        pkg.__path__ = [str(where / "xformers")]
        pkg._is_triton_available = lambda: True
        sys.modules["xformers"] = pkg
    return load(__file__, variant)


def _run(mod, x, weight):
    with torch.no_grad(), cuda_device_on_cpu():
        return mod.rms_norm(x, weight, EPS).float().sum(dim=-1)  # one number a row: see reference()


def launch_buggy(x, weight):
    return _run(_mod("buggy"), x, weight)


def launch_fixed(x, weight):
    return _run(_mod("fixed"), x, weight)


def make_inputs(*, device, gen, rows=64, dim=4096):
    """rows x dim activations in fp16; the trigger is rows * dim > 2**31 (e.g. 524289 x 4096)."""
    x = torch.empty(rows, dim, dtype=torch.float16, device=device)
    chunk = max(1, (1 << 26) // dim)  # filled in pieces: at the trigger x holds 2**31 elements
    for r in range(0, rows, chunk):
        n = min(chunk, rows - r)
        x[r:r + n] = torch.randn(n, dim, generator=gen).to(device=device, dtype=torch.float16)
    weight = (torch.rand(dim, generator=gen) + 0.5).to(device=device, dtype=torch.float16)
    return {"x": x, "weight": weight}


def reference(x, weight):
    """Each normalised row's sum: at the trigger the output holds 2**31 elements, and its float64
    copies (17 GB each) beside the probe's others ran the GPU host out of memory. A row read
    from the wrong place has another sum."""
    out = torch.empty(x.shape[0], dtype=torch.float64, device=x.device)
    chunk = max(1, (1 << 26) // x.shape[-1])
    w = weight.double()
    for r in range(0, x.shape[0], chunk):
        a = x[r:r + chunk].double()
        out[r:r + chunk] = (a * torch.rsqrt((a * a).mean(dim=-1, keepdim=True) + EPS) * w).sum(dim=-1)
    return out


TOLERANCE = {"rtol": 1e-2, "atol": 0.5}  # sums of 4096 fp16 values
