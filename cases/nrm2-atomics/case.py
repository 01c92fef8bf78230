"""Inputs and reference for nrm2-atomics: the Euclidean norm of one fp32 vector.

n is prime, so it is not a multiple of any block size; the vector sits inside NaN
padding so that a kernel reading past the end would show it.
"""

import torch

from harness.buffers import guarded


def make_inputs(*, device, gen, n):
    return {"x": guarded(torch.randn(n, generator=gen), device)}


def reference(x):
    return torch.linalg.vector_norm(x.double())


def torch_equivalent(x):
    return torch.linalg.vector_norm(x)


def bench_work(x):
    return x.numel() * x.element_size()  # bytes read
