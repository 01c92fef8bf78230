"""Inputs and reference for matmul-tf32-default: C = A @ B for fp32 ``randn`` matrices.

The reference is computed in float64. Each element of C is a sum of K products of
unit normals, so |C| is about sqrt(K) (45 for K = 2048).

Tolerance (case.toml): atol = 2e-3, rtol = 0. An fp32 matmul, even one that adds
the K products one after another in fp32 (as Triton's "ieee" dot does), stays under
about 5e-4 here; TF32 operands put the typical element off by about 1e-2 and most
elements past 2e-3. M and N are not multiples of the 64-wide tiles, so the edge masks
run too.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, m, n, k):
    return {
        "a": guarded(torch.randn(m, k, generator=gen), device),
        "b": guarded(torch.randn(k, n, generator=gen), device),
        "c": output((m, n), torch.float32, device),
    }


def reference(a, b):
    return a.double() @ b.double()


def torch_equivalent(a, b):
    return torch.matmul(a, b)  # full fp32: torch.backends.cuda.matmul.allow_tf32 is False by default


def bench_work(a, b):
    return 2 * a.shape[0] * a.shape[1] * b.shape[1]  # floating-point operations
