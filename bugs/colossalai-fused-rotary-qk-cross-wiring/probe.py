"""A reproduction of ColossalAI's fused rotary embedding (colossalai/kernel/triton/fused_rotary_embedding.py,
https://github.com/hpcaitech/ColossalAI/issues/6428): our own kernel with the released kernel's
launch and position lookup, in place on q and k ([tokens, heads, head_dim]), buggy with the released
combination of halves (q's second half from k, k's first half from q), fixed with the PR's.
"""

import torch
import triton
import triton.language as tl

BLOCK_HEAD = 4
BLOCK_SIZE = 8


@triton.jit
def _rotary_inplace(q, k, cos_cache, sin_cache, cum_lens, num_seqs, total_tokens,
                    stride_qt, stride_qh, stride_kt, stride_kh, stride_d, stride_ct, stride_cd,
                    Q_HEADS: tl.constexpr, K_HEADS: tl.constexpr, HEAD_DIM: tl.constexpr,
                    BLOCK_HEAD: tl.constexpr, BLOCK_SIZE: tl.constexpr, SEQS_POW2: tl.constexpr,
                    CROSS_WIRED: tl.constexpr):
    tok = tl.program_id(1) * BLOCK_SIZE + tl.program_id(2)
    heads = tl.program_id(0) * BLOCK_HEAD + tl.arange(0, BLOCK_HEAD)
    half: tl.constexpr = HEAD_DIM // 2
    lo = tl.arange(0, half)
    hi = half + lo
    # position inside the token's sequence: its index minus the last cumulative length not past it
    seq = tl.arange(0, SEQS_POW2)
    cum = tl.load(cum_lens + seq, mask=seq < num_seqs, other=0)
    pos = tok - tl.max(tl.where(cum <= tok, cum, 0))
    c = tl.load(cos_cache + pos * stride_ct + lo * stride_cd)[None, :]
    s = tl.load(sin_cache + pos * stride_ct + lo * stride_cd)[None, :]
    live = tok < total_tokens
    mq = (heads < Q_HEADS)[:, None] & live
    mk = (heads < K_HEADS)[:, None] & live
    pq = q + tok * stride_qt + heads[:, None] * stride_qh
    pk = k + tok * stride_kt + heads[:, None] * stride_kh
    q0 = tl.load(pq + lo[None, :] * stride_d, mask=mq, other=0.0)
    q1 = tl.load(pq + hi[None, :] * stride_d, mask=mq, other=0.0)
    k0 = tl.load(pk + lo[None, :] * stride_d, mask=mk, other=0.0)
    k1 = tl.load(pk + hi[None, :] * stride_d, mask=mk, other=0.0)
    new_q0 = q0 * c - q1 * s
    new_k1 = k0 * s + k1 * c
    if CROSS_WIRED:  # the released kernel: q's second half from k, k's first half from q
        new_q1 = k0 * s + k1 * c  # BUG: k's halves rotate into q
        new_k0 = q0 * c - q1 * s  # BUG: q's halves rotate into k
    else:
        new_q1 = q0 * s + q1 * c
        new_k0 = k0 * c - k1 * s
    tl.store(pq + lo[None, :] * stride_d, new_q0, mask=mq)
    tl.store(pq + hi[None, :] * stride_d, new_q1, mask=mq)
    tl.store(pk + lo[None, :] * stride_d, new_k0, mask=mk)
    tl.store(pk + hi[None, :] * stride_d, new_k1, mask=mk)


def _launch(q, k, cos_cache, sin_cache, lengths, cross_wired):
    q, k = q.clone(), k.clone()
    total, heads, head_dim = q.shape
    cum = torch.cumsum(lengths, dim=0)
    grid = (triton.cdiv(heads, BLOCK_HEAD), triton.cdiv(total, BLOCK_SIZE), BLOCK_SIZE)
    _rotary_inplace[grid](q, k, cos_cache, sin_cache, cum, lengths.numel(), total,
                          q.stride(0), q.stride(1), k.stride(0), k.stride(1), q.stride(2),
                          cos_cache.stride(0), cos_cache.stride(1),
                          Q_HEADS=heads, K_HEADS=k.shape[1], HEAD_DIM=head_dim, BLOCK_HEAD=BLOCK_HEAD,
                          BLOCK_SIZE=BLOCK_SIZE, SEQS_POW2=triton.next_power_of_2(lengths.numel()),
                          CROSS_WIRED=cross_wired, num_warps=8 if head_dim >= 128 else 4)
    return q, k


def launch_buggy(q, k, cos_cache, sin_cache, lengths):
    return _launch(q, k, cos_cache, sin_cache, lengths, True)


def launch_fixed(q, k, cos_cache, sin_cache, lengths):
    return _launch(q, k, cos_cache, sin_cache, lengths, False)


def make_inputs(*, device, gen, seqs=4, max_len=7, heads=32, head_dim=64, cache_len=1024):
    """`seqs` sequences of 1..max_len tokens packed together; head_dim rounded up to a power of two
    (rotary halves; the kernel's arange needs one); values as upstream's test draws them."""
    head_dim = max(2, triton.next_power_of_2(head_dim))
    lengths = torch.randint(1, max_len + 1, (seqs,), generator=gen)
    total = int(lengths.sum())
    q = -2.3 + 0.5 * torch.randn(total, heads, head_dim, generator=gen)
    k = -2.3 + 0.5 * torch.randn(total, heads, head_dim, generator=gen)
    cos_cache = -1.2 + 0.5 * torch.randn(max(cache_len, max_len), head_dim, generator=gen)
    sin_cache = -2.0 + 0.5 * torch.randn(max(cache_len, max_len), head_dim, generator=gen)
    return {"q": q.to(device), "k": k.to(device), "cos_cache": cos_cache.to(device),
            "sin_cache": sin_cache.to(device), "lengths": lengths.to(device)}


def reference(q, k, cos_cache, sin_cache, lengths):
    half = q.shape[-1] // 2
    pos = torch.cat([torch.arange(int(n)) for n in lengths.tolist()]).to(q.device)
    c, s = cos_cache[pos, :half][:, None, :], sin_cache[pos, :half][:, None, :]

    def rot(x):
        x0, x1 = x[..., :half], x[..., half:]
        return torch.cat([x0 * c - x1 * s, x0 * s + x1 * c], dim=-1)

    return rot(q), rot(k)


FUZZ = {"seqs": (1, 8), "max_len": (1, 16), "heads": (1, 32), "head_dim": (2, 128)}
