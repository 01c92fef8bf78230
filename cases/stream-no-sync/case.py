"""Inputs and reference for stream-no-sync: ``relu(a @ b)`` for fp32 matrices.

The launcher runs the matmul on a side stream and the ReLU (a Triton kernel, in
place on ``out``) on the current stream. ``out`` starts out holding the harness's
canary (-1.23e30), so a ReLU that runs before the matmul has written its tile reads
the canary, and the matmul then overwrites that tile with values the ReLU never
saw: negative entries survive. On the GPU the matrices are 4096 x 4096 (a matmul of
about 2 ms in fp32, against a ReLU launched a few microseconds after it).

The reference is computed in float64; the tolerance covers fp32 accumulation over
K = 4096 (PyTorch does not use TF32 for fp32 matmuls by default).
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, m, n, k):
    return {
        "a": guarded(torch.randn(m, k, generator=gen), device),
        "b": guarded(torch.randn(k, n, generator=gen), device),
        "out": output((m, n), torch.float32, device),
    }


def reference(a, b):
    return torch.relu(a.double() @ b.double())
