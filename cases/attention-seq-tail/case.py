"""Inputs and reference for attention-seq-tail: softmax(q k^T / sqrt(d)) v, non-causal, fp16.

q, k and v are (batch, heads, seq, head_dim) with seq not a multiple of the key
block, each inside NaN padding; o sits inside canary padding. Rows past the end of
one head are the next head's first rows, so only the last head's overrun reaches
the padding: the other heads read (and write) their neighbours.
"""

import torch
import torch.nn.functional as F

from harness.buffers import guarded, output


def make_inputs(*, device, gen, b, h, s, d):
    shape = (b, h, s, d)
    return {
        "q": guarded(torch.randn(shape, generator=gen).to(torch.float16), device),
        "k": guarded(torch.randn(shape, generator=gen).to(torch.float16), device),
        "v": guarded(torch.randn(shape, generator=gen).to(torch.float16), device),
        "o": output(shape, torch.float16, device),
    }


def reference(q, k, v):
    # float64, one (batch, head) at a time so that the s x s scores stay small
    b, h, s, d = q.shape
    out = torch.empty(b, h, s, d, dtype=torch.float64, device=q.device)
    for i in range(b):
        for j in range(h):
            qq, kk, vv = q[i, j].double(), k[i, j].double(), v[i, j].double()
            out[i, j] = torch.softmax(qq @ kk.T / d ** 0.5, dim=-1) @ vv
    return out


def torch_equivalent(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


def bench_work(q):
    b, h, s, d = q.shape
    return 4 * b * h * s * s * d  # two matmuls of 2*s*s*d flops per head
