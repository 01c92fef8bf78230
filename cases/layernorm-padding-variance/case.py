"""Inputs and reference for layernorm-padding-variance: layer norm over the last dim.

``N`` is not a power of two (768, GPT-2's hidden size), so each row's block has
padding lanes. Each row gets its own offset, drawn from N(0, 2**2) and added to
``randn``, so the rows' means are far from zero, as activations' often are: the bug's
error grows with ``mean**2`` and would hide in zero-mean data. ``x`` has NaN padding
between its rows (``row_pad``), ``weight`` and ``bias`` sit in NaN padding too, and
``out`` is filled with a canary.

``row_pad`` is an argument so that ``bench`` can ask for contiguous rows: PyTorch's
layer norm copies a non-contiguous input first, which would not be a fair race.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, M, N, row_pad=16):
    offset = 2.0 * torch.randn(M, 1, generator=gen)
    x = torch.randn(M, N, generator=gen) + offset
    return {
        "x": guarded(x, device, row_pad=row_pad),
        "weight": guarded(1.0 + 0.1 * torch.randn(N, generator=gen), device),
        "bias": guarded(0.1 * torch.randn(N, generator=gen), device),
        "out": output((M, N), torch.float32, device),
        "eps": 1e-5,
    }


def reference(x, weight, bias, eps):
    return torch.nn.functional.layer_norm(x.double(), (x.shape[-1],), weight.double(), bias.double(), eps)


def torch_equivalent(x, weight, bias, out, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def bench_work(x, weight, bias, out):
    return (2 * x.numel() + 2 * weight.numel()) * x.element_size()  # read x, w, b; write out
