"""Glue for fast-GeM's Triton GeM pooling (fast_gem/functional/gem.py, gem_triton.py).

gem(x, p, eps, dim=-2, keepdim=True) pools the dims from `dim` on: y = (mean of max(x, eps)^p)^(1/p), one value
per (batch, channel) of an image feature map, shape (batch, channels, 1, 1). For a CUDA tensor it launches
GeMOps (forward_kernel), which addresses x as a dense (batch * channels, height * width) matrix. The glue calls
gem() itself and returns its output.

Under the interpreter (no GPU), two things are answered for the length of the call: gem()'s device check (a CPU
tensor goes to its PyTorch fallback, gem_torch) answers 'not the CPU', so the Triton path is taken as for a
CUDA tensor; and gem()'s silent fallback to gem_torch when the Triton path raises (it also clears a module flag
that keeps every later call on the fallback) is made to raise that error instead, the flag put back first.
gem_torch imports kitsu.utils.cummul, a helper of the author's own package, stubbed with the product it computes.
"""

import contextlib
import sys
import types

import torch

from harness.bugs.source import load


def _cummul(*sizes):
    out = 1
    for s in sizes:
        out *= s
    return out


def _mod(variant):
    return load(__file__, variant, stubs={"kitsu.utils": {"cummul": _cummul}})


class _NotTheCpu:
    """Stands in for fast_gem.functional.gem's `th` (torch), which that module uses only for th.device("cpu")."""

    @staticmethod
    def device(*_args, **_kwargs):
        return None  # equal to no torch.device


@contextlib.contextmanager
def _triton_path(mod, x):
    keep_th, keep_fallback = mod.th, mod.gem_torch

    def _no_fallback(*_args, **_kwargs):
        raise RuntimeError("fast-GeM's Triton path raised and gem() fell back to gem_torch") from sys.exc_info()[1]

    mod._triton_available = True
    mod.gem_torch = _no_fallback
    if x.device.type == "cpu":
        mod.th = _NotTheCpu
    try:
        yield
    finally:
        mod.th, mod.gem_torch = keep_th, keep_fallback


def _run(variant, x, p):
    mod = _mod(variant)
    with _triton_path(mod, x):
        return mod.gem(x, p, 1e-6, -2, True)


def launch_buggy(x, p):
    return _run("buggy", x, p)


def launch_fixed(x, p):
    return _run("fixed", x, p)


def make_inputs(*, device, gen, batch=5, channels=10, height=20, width=40, channels_last=0):
    """As the upstream notebook's correctness check makes them: x = rand(batch, channels, height, width), float32,
    p a one-element float32 tensor (3.0, the GeM module's default). channels_last=1 gives x the same shape laid
    out channels_last: a permuted view of a (batch, height, width, channels) buffer made on the device."""
    if channels_last:
        x = torch.rand(batch, height, width, channels, generator=gen).to(device).permute(0, 3, 1, 2)
    else:
        x = torch.rand(batch, channels, height, width, generator=gen).to(device)
    p = torch.full((1,), 3.0).to(device)
    return {"x": x, "p": p}


def reference(x, p):
    """(mean over height and width of max(x, eps)^p)^(1/p), kept as (batch, channels, 1, 1)."""
    pv = p.reshape(())
    return x.clamp_min(1e-6).pow(pv).mean(dim=(-2, -1), keepdim=True).pow(1.0 / pv)


FUZZ = {"batch": (1, 8), "channels": (1, 64), "height": (1, 64), "width": (1, 64), "channels_last": (0, 1)}
