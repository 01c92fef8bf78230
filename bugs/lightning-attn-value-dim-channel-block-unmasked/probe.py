"""Glue for lightning-attn's lightning_attn_func (lightning_attn/ops/lightning_attn_interface.py):
Lightning Attention-2, causal linear attention with a per-head exponential decay,
o[t] = sum_{s <= t} exp(-slope_h * (t - s)) (q[t] . k[s]) v[s], for q, k of shape (b, h, n, d) and
v of shape (b, h, n, e). The interface checks the head dims, splits d > 128 into chunks, and calls
the autograd function LightningAttention2, whose forward launches _fwd_kernel over a grid of
(b * h, value-dim blocks); the launch returns o. Only the forward pass is run.

``s`` is the per-head decay, shape (h, 1, 1), as lightning_attn.utils._build_slope_tensor makes it
(the ALiBi slopes); the glue builds the same numbers itself.
"""

import math

import torch

from harness.bugs.source import load


def _run(variant, q, k, v, s):
    mod = load(__file__, variant)
    return mod.lightning_attn_func(q, k, v, s)


def launch_buggy(q, k, v, s):
    return _run("buggy", q, k, v, s)


def launch_fixed(q, k, v, s):
    return _run("fixed", q, k, v, s)


def _slopes(h):
    """The ALiBi slopes for h heads (the closest power of two, then every other slope of twice as
    many heads for the rest), as (h, 1, 1) float32."""
    def pow2(m):
        start = 2 ** (-(2 ** -(math.log2(m) - 3)))
        return [start ** (i + 1) for i in range(m)]

    if math.log2(h).is_integer():
        sl = pow2(h)
    else:
        c = 2 ** math.floor(math.log2(h))
        sl = pow2(c) + pow2(2 * c)[0::2][: h - c]
    return torch.tensor(sl, dtype=torch.float32).reshape(h, 1, 1)


def make_inputs(*, device, gen, b=1, h=2, n=256, d=64, e=64):
    """As lightning-attention's tests/ops/test_lightning2.py makes them: q, k (b, h, n, d) and v
    (b, h, n, e) randn / 10 in float16 (the tests run bf16 and fp16), and the heads' slopes from
    _build_slope_tensor(h) in float32."""
    dt = torch.float16
    q = (torch.randn(b, h, n, d, generator=gen) / 10).to(dt)
    k = (torch.randn(b, h, n, d, generator=gen) / 10).to(dt)
    v = (torch.randn(b, h, n, e, generator=gen) / 10).to(dt)
    return {"q": q.to(device), "k": k.to(device), "v": v.to(device), "s": _slopes(h).to(device)}


def reference(q, k, v, s):
    """The decayed causal linear attention, as the project's torch linear_attn computes it (a mask
    exp(-slope * (t - j)) for j <= t, 0 above the diagonal), all in float64."""
    n = q.shape[2]
    t = torch.arange(n, device=q.device, dtype=torch.float64)
    dist = t[:, None] - t[None, :]
    slope = s.reshape(-1, 1, 1).to(torch.float64)
    mask = torch.where(dist >= 0, torch.exp(-slope * dist.clamp(min=0)), torch.zeros((), dtype=torch.float64,
                                                                                     device=q.device))
    qk = torch.matmul(q.to(torch.float64), k.to(torch.float64).transpose(2, 3)) * mask
    return torch.matmul(qk, v.to(torch.float64))


FUZZ = {"b": (1, 2), "h": (1, 4), "n": (1, 1213), "e": (17, 192)}
