"""A reproduction of segment-anything-fast's Triton flash attention with SAM's decomposed relative-position bias
(segment_anything_fast/flash_4.py: the kernel _fwd_kernel_aligned, its launcher
_attention_rel_h_rel_w_kernel_aligned_device and the custom op custom_flash_aligned, which _attention_rel_h_rel_w
calls from the image encoder's global-attention blocks): our own kernel and launcher with the same mechanism,
launch pattern and arguments.

SAM's image encoder attends over a 64 x 64 grid of tokens (4096) with a bias that is the sum of a row term and a
column term: bias[i, j] = rel_h[i, j // 64] + rel_w[i, j % 64]. The launcher packs the two as one
(batch, heads, 4096, 128) tensor rel_h_w = cat(rel_h, rel_w), so the kernel adds, for the key block starting at
start_n (BLOCK_N = 64 keys, one row of the grid), rel_h_w[i, start_n // 64] + rel_w's 64 columns. Grid
(4096 / BLOCK_M, batch * heads), one program per block of 64 queries, walking the 64 key blocks with the online
softmax of flash attention v2, in base 2: q is multiplied by sm_scale * log2(e) once, and exp2 takes the place of
exp. fp16 or bf16 inputs, output in the input's dtype.

Buggy, as at the fix's parent (PR 108's parent, 387488b^): q.k is accumulated in the input's 16-bit dtype
(tl.dot(..., out_dtype=OUT_DTYPE)) and the bias is added to the base-2 logits as it is, so the softmax sees
bias * ln(2) in place of the bias. Fixed, as commit 387488b: q.k in fp32, the bias multiplied by log2(e) before it
is added. The two sides differ only there (a constexpr switch, the lines marked # BUG:). With a zero bias they
agree but for the rounding of q.k.

Block sizes: BLOCK_M = BLOCK_N = 64, 4 warps, 2 stages, upstream's saved A100 choice for head_dim 64
(configs/flash_4_configs_a100.p). The kernel indexes rel_h by start_n // BLOCK_N, right only for BLOCK_N = 64
(one grid row a block); upstream's table picks BLOCK_N = 128 for batch 1, where that indexing is wrong, and the
fix routed batch 1 away from the kernel instead ('does not produce correct results for batch size 1'), so the
glue, like the model's wrapper, sends batches of 2 and more."""

import math

import torch
import triton
import triton.language as tl

GRID_SIDE = 64        # the image encoder's 64 x 64 token grid
SEQ = GRID_SIDE * GRID_SIDE


@triton.jit
def _rel_pos_flash_fwd(Q, K, V, RelHW, sm_scale, Out,
                       stride_qh, stride_qm, stride_qk, stride_kh, stride_kn, stride_kk,
                       stride_vh, stride_vk, stride_vn, stride_oh, stride_om, stride_on,
                       stride_bh, stride_bm, N_CTX,
                       OUT_DTYPE: tl.constexpr, HALF_BIAS: tl.constexpr, HEAD_DIM: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FIXED: tl.constexpr):
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    q_blk = tl.make_block_ptr(base=Q + off_hz * stride_qh, shape=(N_CTX, HEAD_DIM), strides=(stride_qm, stride_qk),
                              offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0))
    kt_blk = tl.make_block_ptr(base=K + off_hz * stride_kh, shape=(HEAD_DIM, N_CTX), strides=(stride_kk, stride_kn),
                               offsets=(0, 0), block_shape=(HEAD_DIM, BLOCK_N), order=(0, 1))
    v_blk = tl.make_block_ptr(base=V + off_hz * stride_vh, shape=(N_CTX, HEAD_DIM), strides=(stride_vk, stride_vn),
                              offsets=(0, 0), block_shape=(BLOCK_N, HEAD_DIM), order=(1, 0))

    row_max = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    row_sum = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    q = (tl.load(q_blk) * (sm_scale * 1.44269504)).to(OUT_DTYPE)   # base-2 logits from here on

    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    bias_rows = RelHW + off_hz * stride_bh + rows[:, None] * stride_bm
    cols_w = (tl.arange(0, BLOCK_N) % HALF_BIAS) + HALF_BIAS        # rel_w's columns, the second half
    bias_w = tl.load(bias_rows + cols_w[None, :])
    for start_n in range(0, N_CTX, BLOCK_N):
        k = tl.load(kt_blk)
        v = tl.load(v_blk)
        if FIXED:   # fixed (387488b): q.k in fp32
            qk = tl.dot(q, k)
        else:       # BUG: q.k accumulated in the 16-bit input dtype
            qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=OUT_DTYPE)
            qk += tl.dot(q, k, out_dtype=OUT_DTYPE)
        bias_h = tl.load(bias_rows + start_n // BLOCK_N)              # rel_h of this key block's grid row
        if FIXED:   # fixed: the bias moved to base 2 like the logits
            qk += (bias_h + bias_w) * 1.44269504
        else:       # BUG: the bias added in base e to base-2 logits
            qk += (bias_h + bias_w)

        new_max = tl.maximum(row_max, tl.max(qk, 1))
        alpha = tl.math.exp2(row_max - new_max)
        p = tl.math.exp2(qk - new_max[:, None])
        acc = acc * alpha[:, None] + tl.dot(p.to(OUT_DTYPE), v)
        row_sum = row_sum * alpha + tl.sum(p, 1)
        row_max = new_max
        kt_blk = tl.advance(kt_blk, (0, BLOCK_N))
        v_blk = tl.advance(v_blk, (BLOCK_N, 0))

    acc = acc / row_sum[:, None]
    o_blk = tl.make_block_ptr(base=Out + off_hz * stride_oh, shape=(N_CTX, HEAD_DIM), strides=(stride_om, stride_on),
                              offsets=(start_m * BLOCK_M, 0), block_shape=(BLOCK_M, HEAD_DIM), order=(1, 0))
    tl.store(o_blk, acc.to(OUT_DTYPE))


def _flash_rel_pos(q, k, v, rel_h_w, sm_scale, fixed, block_m=64, block_n=64, num_warps=4, num_stages=2):
    """As custom_flash_aligned and its device launcher: contiguous q, k, v, an empty output, grid
    (N_CTX / BLOCK_M, batch * heads)."""
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    assert q.shape == k.shape == v.shape and q.shape[-1] in {16, 32, 64, 128}
    assert q.dtype in (torch.float16, torch.bfloat16) and k.dtype == v.dtype == rel_h_w.dtype == q.dtype
    assert q.shape[-2] == rel_h_w.shape[-2] and rel_h_w.shape[-1] == 2 * GRID_SIDE and rel_h_w.is_contiguous()
    o = torch.empty_like(q, memory_format=torch.contiguous_format)
    grid = (triton.cdiv(q.shape[2], block_m), q.shape[0] * q.shape[1], 1)
    _rel_pos_flash_fwd[grid](
        q, k, v, rel_h_w, sm_scale, o,
        q.stride(1), q.stride(2), q.stride(3), k.stride(1), k.stride(2), k.stride(3),
        v.stride(1), v.stride(2), v.stride(3), o.stride(1), o.stride(2), o.stride(3),
        rel_h_w.stride(1), rel_h_w.stride(2), q.shape[2],
        OUT_DTYPE=tl.float16 if q.dtype == torch.float16 else tl.bfloat16,
        HALF_BIAS=rel_h_w.shape[-1] // 2, HEAD_DIM=q.shape[-1], BLOCK_M=block_m, BLOCK_N=block_n, FIXED=fixed,
        num_warps=num_warps, num_stages=num_stages)
    return o


def _run(fixed, q, k, v, rel_h, rel_w):
    """As _attention_rel_h_rel_w takes the image encoder's tensors for vit_b and vit_l (head_dim 64, 4096 tokens,
    batch > 1): rel_h (B, H, 4096, 64, 1) and rel_w (B, H, 4096, 1, 64) packed side by side."""
    assert q.shape[0] > 1 and q.shape[-2] == SEQ and q.shape[-1] == 64
    rel_h_w = torch.cat([rel_h.squeeze(-1), rel_w.squeeze(-2)], dim=-1)
    return _flash_rel_pos(q, k, v, rel_h_w, 1.0 / math.sqrt(q.shape[-1]), fixed)


def launch_buggy(q, k, v, rel_h, rel_w):
    return _run(False, q, k, v, rel_h, rel_w)


def launch_fixed(q, k, v, rel_h, rel_w):
    return _run(True, q, k, v, rel_h, rel_w)


def make_inputs(*, device, gen, batch=2, heads=1):
    """As the fix's test test_flash_4.py makes them (test_op): q, k, v (batch, heads, 4096, 64) normal with std
    0.5, rel_h (batch, heads, 4096, 64, 1) and rel_w (batch, heads, 4096, 1, 64) normal with std 0.5, float16.
    The test's head_dim-64 case (vit_b, 12 heads) at batch 8; here batch 2 (the smallest batch the model's
    wrapper sends to the kernel) and 1 head, for the interpreter's time (4096 tokens are fixed by the model)."""
    def normal(*shape):
        return (torch.randn(*shape, generator=gen) * 0.5).to(torch.float16).to(device)

    q, k, v = (normal(batch, heads, SEQ, 64) for _ in range(3))
    rel_h = normal(batch, heads, SEQ, GRID_SIDE, 1)
    rel_w = normal(batch, heads, SEQ, 1, GRID_SIDE)
    return {"q": q, "k": k, "v": v, "rel_h": rel_h, "rel_w": rel_w}


def reference(q, k, v, rel_h, rel_w):
    """softmax(q k^T / sqrt(d) + bias) v with bias = (rel_h + rel_w) viewed as (B, H, 4096, 4096), as the test's
    scaled_dot_product_attention reference."""
    bias = (rel_h + rel_w).reshape(q.shape[0], q.shape[1], q.shape[2], SEQ)
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + bias
    return torch.softmax(scores, dim=-1) @ v


FUZZ = {"batch": (2, 4), "heads": (1, 2)}
