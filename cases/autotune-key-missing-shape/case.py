"""Inputs and reference for autotune-key-missing-shape: RMSNorm of the two MLA latents, fp32.

kv_c is (rows, kv_rank) and q_c is (rows, q_rank) with kv_rank < q_rank, the same
number of rows (tokens), and padding between rows. Both outputs sit in canary
padding, so the harness reports the columns of q_out that no program wrote.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, rows, kv_rank, q_rank):
    return {
        "kv_c": guarded(torch.randn(rows, kv_rank, generator=gen), device, row_pad=16),
        "q_c": guarded(torch.randn(rows, q_rank, generator=gen), device, row_pad=16),
        "kv_out": output((rows, kv_rank), torch.float32, device),
        "q_out": output((rows, q_rank), torch.float32, device),
    }


def _rms_norm(x, eps=1e-6):
    x = x.double()
    return x * torch.rsqrt(x.pow(2).mean(dim=1, keepdim=True) + eps)


def reference(kv_c, q_c):
    return torch.cat((_rms_norm(kv_c), _rms_norm(q_c)), dim=1)
