"""Flash-attention forward with no masks: when seq_len is not a multiple of the block, keys past the end enter the softmax.

Each program takes ``BLOCK_M`` queries of one (batch, head) and walks over the keys
``BLOCK_N`` at a time with the online softmax of Triton's fused-attention tutorial:
keep a running row maximum ``m_i`` and row sum ``l_i``, rescale the accumulator by
``exp2(m_old - m_new)`` whenever the maximum grows, and divide by ``l_i`` at the
end. The tutorial's kernel does not mask the sequence axis: it is written for
sequence lengths that are multiples of its blocks.

Give it ``S = 200`` with 64-wide key blocks and the last block holds 8 real keys and
56 that do not exist. Their scores are not set to ``-inf``, so they take softmax
weight like any other key, and their values are added into the output. In a
(batch, head, seq, dim) tensor the rows past the end of one head are the first rows
of the next head, so every head but the last attends to 56 keys of its neighbour;
the last head reads past the end of the tensor (here: NaN). The queries and the
output have the same problem on the row side: the last query block loads the next
head's queries and stores its rows over the next head's output.
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

    q = tl.load(q_ptrs)  # BUG: no mask: the last query block reads past row S
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504  # exp(x) = exp2(x * log2(e))
    for start_n in range(0, S, BLOCK_N):
        k = tl.load(k_ptrs + start_n * stride_ks)  # BUG: no mask: the last key block reads past row S
        qk = tl.dot(q, tl.trans(k))  # NOTE: nothing sets the scores of keys past S to -inf, so they get weight
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptrs + start_n * stride_vs)  # BUG: no mask: the last value block reads past row S
        acc = tl.dot(p.to(tl.float16), v, acc * alpha[:, None])
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(o_ptrs, acc.to(tl.float16))  # BUG: no mask: the last query block writes past row S


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
