"""Inputs and reference of the nrm2 cases: the Euclidean norm of one fp32 vector.

One file, byte for byte the same in nrm2-atomic-order, nrm2-atomics, nrm2-global-sum,
nrm2-race and nrm2-sqrt-per-block: change it in one, copy it to the others. Every
size in their case.toml files is prime, so n is not a multiple of any block size, and
the vector sits inside NaN padding, so a kernel that reads past its end shows it.
"""

import torch

from harness.buffers import guarded


def make_inputs(*, device, gen, n):
    return {"x": guarded(torch.randn(n, generator=gen), device)}


def reference(x):
    return torch.linalg.vector_norm(x.double())


def torch_equivalent(x):  # what `python -m harness bench` times against, for a case with [bench]
    return torch.linalg.vector_norm(x)


def bench_work(x):
    return x.numel() * x.element_size()  # bytes read
