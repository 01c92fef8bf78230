"""Inputs and reference for store-then-load-no-barrier: RMS-normalise each head vector, then apply rotary embeddings.

A fused QK-norm + RoPE, as models like Qwen3 apply to q and k: each row of ``x`` is
one head of one token (``D = 128`` values); it is RMS-normalised with a learned
weight, then rotated by the rotary embedding of its token's position,
``y * cos + rotate_half(y) * sin`` with ``rotate_half(y) = cat(-y[D/2:], y[:D/2])``.
``out`` starts out holding the harness's canary (-1.23e30), so a read of ``out``
before it was written shows up as a huge wrong value.

The reference does the same in float64.
"""

import torch

from harness.buffers import guarded, output

D = 128
EPS = 1e-6


def make_inputs(*, device, gen, tokens, heads):
    pos = torch.arange(tokens, dtype=torch.float64)
    inv_freq = 10000.0 ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)
    angle = pos[:, None] * inv_freq[None, :]
    return {
        "x": guarded(torch.randn(tokens * heads, D, generator=gen), device),
        "w": guarded(torch.rand(D, generator=gen) + 0.5, device),
        "cos": guarded(torch.cat([angle.cos(), angle.cos()], 1).float(), device),
        "sin": guarded(torch.cat([angle.sin(), angle.sin()], 1).float(), device),
        "out": output((tokens * heads, D), torch.float32, device),
    }


def reference(x, w, cos, sin):
    x = x.double()
    y = x * torch.rsqrt((x * x).mean(1, keepdim=True) + EPS) * w.double()
    rot = torch.cat([-y[:, D // 2:], y[:, :D // 2]], 1)
    token = torch.arange(x.shape[0], device=x.device) // (x.shape[0] // cos.shape[0])
    return y * cos.double()[token] + rot * sin.double()[token]
