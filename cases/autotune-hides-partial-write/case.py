"""Inputs and reference for autotune-hides-partial-write: out = x.T, fp32.

x is M x N with padding between its rows (so a kernel that ignored the row stride
would read NaN). The launcher allocates out itself, as a real launcher does, so
every call gets a fresh output: the first call's is filled by the tuning runs, the
second call's only by the one real launch.
"""

import torch

from harness.buffers import guarded


def make_inputs(*, device, gen, M, N):
    return {"x": guarded(torch.randn(M, N, generator=gen), device, row_pad=16)}


def reference(x):
    return x.double().T
