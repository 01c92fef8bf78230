"""Flash-attention forward with masks on the sequence tail: keys past the end get no weight.

The same kernel with the four loads and the store masked by ``< S``, and one more
line: the scores of keys past ``S`` are set to ``-inf``, so ``exp2`` gives them a
weight of exactly 0. The value rows past ``S`` are loaded as zeros as well, because
a weight of 0 does not cancel what the load returned: ``0 * NaN`` is NaN. Query rows
past ``S`` are computed on zeros and never stored.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, sm_scale, S,
                    stride_qh, stride_qs, stride_kh, stride_ks, stride_vh, stride_vs, stride_oh, stride_os,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)  # batch * heads + head
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_ptrs = q_ptr + bh * stride_qh + offs_m[:, None] * stride_qs + offs_d[None, :]
    k_ptrs = k_ptr + bh * stride_kh + offs_n[:, None] * stride_ks + offs_d[None, :]
    v_ptrs = v_ptr + bh * stride_vh + offs_n[:, None] * stride_vs + offs_d[None, :]
    o_ptrs = o_ptr + bh * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :]

    q = tl.load(q_ptrs, mask=offs_m[:, None] < S, other=0.0)  # FIX: no reads past row S
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # exp(x) = exp2(x * log2(e))
    for start_n in range(0, S, BLOCK_N):
        k = tl.load(k_ptrs + start_n * stride_ks, mask=(start_n + offs_n)[:, None] < S, other=0.0)  # FIX: no key rows past S
        qk = tl.dot(q, tl.trans(k))
        qk = tl.where((start_n + offs_n)[None, :] < S, qk, float("-inf"))  # FIX: keys past S get weight 0
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptrs + start_n * stride_vs, mask=(start_n + offs_n)[:, None] < S, other=0.0)  # FIX: zeros, as 0 * NaN is NaN
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(o_ptrs, acc.to(tl.float16), mask=offs_m[:, None] < S)  # FIX: no writes past row S


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
    B, H, S, D = q.shape
    for t in (q, k, v, o):  # heads may be flattened into one index
        assert t.stride(3) == 1 and t.stride(0) == H * t.stride(1)
    grid = (triton.cdiv(S, 128), B * H)
    attn_fwd_kernel[grid](q, k, v, o, D ** -0.5, S,
                          q.stride(1), q.stride(2), k.stride(1), k.stride(2),
                          v.stride(1), v.stride(2), o.stride(1), o.stride(2),
                          BLOCK_M=128, BLOCK_N=64, HEAD_DIM=D, num_warps=4, num_stages=3)
    return o


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
