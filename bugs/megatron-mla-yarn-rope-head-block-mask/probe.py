"""A reproduction of Megatron's fused MLA RoPE forward (megatron/core/fusions/fused_mla_yarn_rope_apply.py,
_mla_rope_fwd_inplace_kernel; https://github.com/NVIDIA/Megatron-LM/issues/7103): our own kernel with
the released one's layout, in place on q [seqlen, batch, heads, q_dim + emb_dim]: the trailing
emb_dim channels of each head are read interleaved (x1 = even, x2 = odd), rotated by the token's
position and written back de-interleaved (left half, right half). Buggy: heads masked by their
index inside the block against the whole head count (the released mask); fixed: by their global
index (the PR's).
"""

import torch
import triton
import triton.language as tl

BLOCK_H = 8  # one of the released autotuner's configurations (1 .. 128)


@triton.jit
def _mla_rope_inplace(Q, COS, SIN, nope_dim, batch, stride_tok, stride_head, stride_cos,
                      EMB: tl.constexpr, HEADS: tl.constexpr, BLOCK_H: tl.constexpr,
                      GLOBAL_MASK: tl.constexpr):
    tok = tl.program_id(0)
    hblock = tl.program_id(1)
    pos = tok // batch
    half: tl.constexpr = EMB // 2
    j = tl.arange(0, half)
    # in float32: Triton 3.7.1's interpreter multiplies two bf16 values wrongly (the released kernel
    # multiplies in bf16; on a GPU that rounds the same products to bf16 once more)
    cos_l = tl.load(COS + pos * stride_cos + j).to(tl.float32)[None, :]
    sin_l = tl.load(SIN + pos * stride_cos + j).to(tl.float32)[None, :]
    cos_r = tl.load(COS + pos * stride_cos + half + j).to(tl.float32)[None, :]
    sin_r = tl.load(SIN + pos * stride_cos + half + j).to(tl.float32)[None, :]
    base = Q + tok * stride_tok + hblock * BLOCK_H * stride_head
    h = tl.arange(0, BLOCK_H)[:, None]
    rope = h * stride_head + nope_dim
    if GLOBAL_MASK:
        keep = (hblock * BLOCK_H + h) < HEADS
    else:  # the released comparison: the head's place in its block against the whole head count
        keep = rope < HEADS * stride_head  # BUG: the head's index in its block, not in the tensor
    x1 = tl.load(base + rope + 2 * j[None, :], mask=keep).to(tl.float32)
    x2 = tl.load(base + rope + 2 * j[None, :] + 1, mask=keep).to(tl.float32)
    left = x1 * cos_l - x2 * sin_l
    right = x2 * cos_r + x1 * sin_r
    tl.store(base + rope + j[None, :], left, mask=keep)
    tl.store(base + rope + half + j[None, :], right, mask=keep)


def _launch(q, cos, sin, emb_dim, global_mask):
    q = q.clone()
    seqlen, batch, heads, dim = q.shape
    flat = q.view(seqlen * batch, heads, dim)
    grid = (seqlen * batch, triton.cdiv(heads, BLOCK_H))
    _mla_rope_inplace[grid](flat, cos, sin, dim - emb_dim, batch, flat.stride(0), flat.stride(1), cos.stride(0),
                            EMB=emb_dim, HEADS=heads, BLOCK_H=BLOCK_H, GLOBAL_MASK=global_mask)
    return q


def launch_buggy(q, cos, sin, emb):
    return _launch(q, cos, sin, emb.shape[0], False)


def launch_fixed(q, cos, sin, emb):
    return _launch(q, cos, sin, emb.shape[0], True)


def make_inputs(*, device, gen, seqlen=64, batch=2, heads=32, q_dim=128, emb_dim=64):
    """q as upstream's test makes it (bf16, sbhd); cos/sin of standard rotary angles, [seqlen, emb_dim]
    (the two halves the same frequencies). emb_dim is rounded up to a power of two (the kernel's
    arange of its half needs one)."""
    emb_dim = max(2, triton.next_power_of_2(emb_dim))
    q = torch.randn(seqlen, batch, heads, q_dim + emb_dim, generator=gen).to(torch.bfloat16)
    inv = 1.0 / (10000 ** (torch.arange(0, emb_dim, 2, dtype=torch.float64) / emb_dim))
    ang = torch.arange(seqlen, dtype=torch.float64)[:, None] * inv[None, :]
    ang = torch.cat([ang, ang], dim=-1)
    return {"q": q.to(device), "cos": torch.cos(ang).to(torch.bfloat16).to(device),
            "sin": torch.sin(ang).to(torch.bfloat16).to(device), "emb": torch.empty(emb_dim, device=device)}


def reference(q, cos, sin, emb):
    e = emb.shape[0]
    half = e // 2
    pe = q[..., -e:]
    x1, x2 = pe[..., 0::2], pe[..., 1::2]
    c = cos[:, None, None, :]
    s = sin[:, None, None, :]
    left = x1 * c[..., :half] - x2 * s[..., :half]
    right = x2 * c[..., half:] + x1 * s[..., half:]
    return torch.cat([q[..., :-e], left, right], dim=-1)


FUZZ = {"seqlen": (1, 64), "batch": (1, 2), "heads": (1, 32), "q_dim": (0, 128), "emb_dim": (2, 64)}
