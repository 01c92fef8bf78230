"""Inputs and reference for nrm2-race: the Euclidean norm of one fp32 vector."""

import torch

from harness.buffers import guarded


def make_inputs(*, device, gen, n):
    return {"x": guarded(torch.randn(n, generator=gen), device)}


def reference(x):
    return torch.linalg.vector_norm(x.double())
