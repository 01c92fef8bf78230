"""Inputs and reference for causal-mask-wrong-corner: causal softmax(q k^T / sqrt(d)) v with S_q < S_k.

q is (batch, heads, S_q, head_dim), k and v are (batch, heads, S_k, head_dim), all
fp16 inside NaN padding; o sits inside canary padding. The queries are the last S_q
positions of the sequence, so the reference masks key j for query i when
j > i + S_k - S_q (the bottom-right alignment of flash-attention and FlashInfer).
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, b, h, s_q, s_k, d):
    return {
        "q": guarded(torch.randn(b, h, s_q, d, generator=gen).to(torch.float16), device),
        "k": guarded(torch.randn(b, h, s_k, d, generator=gen).to(torch.float16), device),
        "v": guarded(torch.randn(b, h, s_k, d, generator=gen).to(torch.float16), device),
        "o": output((b, h, s_q, d), torch.float16, device),
    }


def reference(q, k, v):
    b, h, s_q, d = q.shape
    s_k = k.shape[2]
    i = torch.arange(s_q, device=q.device)[:, None]
    j = torch.arange(s_k, device=q.device)[None, :]
    hidden = j > i + (s_k - s_q)  # bottom-right aligned causal mask
    out = torch.empty(b, h, s_q, d, dtype=torch.float64, device=q.device)
    for x in range(b):
        for y in range(h):
            scores = q[x, y].double() @ k[x, y].double().T / d ** 0.5
            out[x, y] = torch.softmax(scores.masked_fill(hidden, float("-inf")), dim=-1) @ v[x, y].double()
    return out
