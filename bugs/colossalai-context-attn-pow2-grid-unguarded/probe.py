"""A reproduction of ColossalAI's unpadded context attention (colossalai/kernel/triton/context_attn_unpad.py
before and after https://github.com/hpcaitech/ColossalAI/pull/5306): our own kernel with the released
one's launch: grid (next_power_of_2(num_seqs), heads, cdiv(max_len, block_size)), each program a
block of query rows of one sequence and head, causal online-softmax attention over the sequence's
keys, the output rows stored, and (first head of each KV group) the block's keys and values copied
into the paged cache at block_tables[seq, block]. Buggy: no early exit for sequence programs past
the batch, as released; fixed: the PR's guard.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _context_attention(Q, K, V, O, KC, VC, BT, lens, num_seqs, sm_scale,
                       s_qt, s_qh, s_kt, s_kh, s_ot, s_oh, s_cb, s_ch, s_ct, s_bts,
                       GROUPS: tl.constexpr, D: tl.constexpr, BLOCK: tl.constexpr, GUARD: tl.constexpr):
    seq = tl.program_id(0)
    head = tl.program_id(1)
    mb = tl.program_id(2)
    if GUARD:  # the fix; # BUG: without it the programs past the batch go on
        if seq >= num_seqs:
            return
    kvh = head // GROUPS
    length = tl.load(lens + seq)
    start = 0
    for i in range(0, seq):
        start += tl.load(lens + i)
    if mb * BLOCK >= length:
        return
    rm = mb * BLOCK + tl.arange(0, BLOCK)
    rd = tl.arange(0, D)
    q = tl.load(Q + (start + rm)[:, None] * s_qt + head * s_qh + rd[None, :], mask=rm[:, None] < length, other=0.0)
    m_i = tl.full((BLOCK,), -float("inf"), tl.float32)
    l_i = tl.zeros((BLOCK,), tl.float32)
    acc = tl.zeros((BLOCK, D), tl.float32)
    for n0 in range(0, (mb + 1) * BLOCK, BLOCK):
        rn = n0 + tl.arange(0, BLOCK)
        kt = tl.load(K + (start + rn)[None, :] * s_kt + kvh * s_kh + rd[:, None], mask=rn[None, :] < length, other=0.0)
        s = tl.dot(q, kt) * sm_scale
        s = tl.where((rm[:, None] >= rn[None, :]) & (rn[None, :] < length), s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, 1)
        v = tl.load(V + (start + rn)[:, None] * s_kt + kvh * s_kh + rd[None, :], mask=rn[:, None] < length, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(O + (start + rm)[:, None] * s_ot + head * s_oh + rd[None, :], acc.to(O.dtype.element_ty),
             mask=rm[:, None] < length)
    if head % GROUPS == 0:  # copy this block of keys and values into the paged cache
        blk = tl.load(BT + seq * s_bts + mb)
        rows = (rm < length)[:, None]
        kk = tl.load(K + (start + rm)[:, None] * s_kt + kvh * s_kh + rd[None, :], mask=rows, other=0.0)
        vv = tl.load(V + (start + rm)[:, None] * s_kt + kvh * s_kh + rd[None, :], mask=rows, other=0.0)
        at = blk * s_cb + kvh * s_ch + tl.arange(0, BLOCK)[:, None] * s_ct + rd[None, :]
        tl.store(KC + at, kk, mask=rows)
        tl.store(VC + at, vv, mask=rows)


def _launch(q, k, v, k_cache, v_cache, lengths, block_tables, guard):
    k_cache, v_cache = k_cache.clone(), v_cache.clone()
    num_seqs, max_blocks = block_tables.shape
    heads, d = q.shape[1], q.shape[2]
    block = k_cache.shape[2]
    out = torch.zeros_like(q)
    grid = (triton.next_power_of_2(num_seqs), heads, triton.cdiv(int(lengths.max()), block))
    _context_attention[grid](q, k, v, out, k_cache, v_cache, block_tables, lengths, num_seqs, 1.0 / d ** 0.5,
                             q.stride(0), q.stride(1), k.stride(0), k.stride(1), out.stride(0), out.stride(1),
                             k_cache.stride(0), k_cache.stride(1), k_cache.stride(2), block_tables.stride(0),
                             GROUPS=heads // k.shape[1], D=d, BLOCK=block, GUARD=guard)
    return out, k_cache, v_cache


def launch_buggy(q, k, v, k_cache, v_cache, lengths, block_tables):
    return _launch(q, k, v, k_cache, v_cache, lengths, block_tables, False)


def launch_fixed(q, k, v, k_cache, v_cache, lengths, block_tables):
    return _launch(q, k, v, k_cache, v_cache, lengths, block_tables, True)


def make_inputs(*, device, gen, bsz=4, blocks_per_seq=8, heads=16, kv_group=1):
    """bsz prompts of block_size * blocks_per_seq tokens (upstream's same_context_len), block_size 16,
    HEAD_DIM 32, float16 q/k/v ~ N(0, 0.5); the KV cache [bsz * blocks_per_seq, kv_heads, 16, 32]
    zeroed, block_tables giving each prompt its own consecutive blocks. kv_group is rounded to a
    divisor of heads."""
    block, d = 16, 32
    while heads % kv_group:
        kv_group -= 1
    kv_heads = heads // kv_group
    lengths = torch.full((bsz,), block * blocks_per_seq, dtype=torch.int32)
    tokens = int(lengths.sum())
    q = (0.5 * torch.randn(tokens, heads, d, generator=gen)).to(torch.float16)
    k = (0.5 * torch.randn(tokens, kv_heads, d, generator=gen)).to(torch.float16)
    v = (0.5 * torch.randn(tokens, kv_heads, d, generator=gen)).to(torch.float16)
    cache = torch.zeros(bsz * blocks_per_seq, kv_heads, block, d, dtype=torch.float16)
    tables = torch.arange(bsz * blocks_per_seq, dtype=torch.int32).view(bsz, blocks_per_seq)
    return {"q": q.to(device), "k": k.to(device), "v": v.to(device), "k_cache": cache.to(device),
            "v_cache": cache.clone().to(device), "lengths": lengths.to(device), "block_tables": tables.to(device)}


def reference(q, k, v, k_cache, v_cache, lengths, block_tables):
    out = torch.zeros_like(q)
    kc, vc = k_cache.clone(), v_cache.clone()
    heads, kv_heads, block = q.shape[1], k.shape[1], k_cache.shape[2]
    start = 0
    for s, n in enumerate(lengths.tolist()):
        qs, ks, vs = q[start:start + n], k[start:start + n], v[start:start + n]
        ks_h = ks.repeat_interleave(heads // kv_heads, dim=1)
        vs_h = vs.repeat_interleave(heads // kv_heads, dim=1)
        scores = torch.einsum("thd,shd->hts", qs, ks_h) / q.shape[2] ** 0.5
        causal = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
        p = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
        out[start:start + n] = torch.einsum("hts,shd->thd", p, vs_h)
        for j in range(-(-n // block)):
            rows = min(block, n - j * block)
            kc[block_tables[s, j], :, :rows] = ks[j * block:j * block + rows].transpose(0, 1)
            vc[block_tables[s, j], :, :rows] = vs[j * block:j * block + rows].transpose(0, 1)
        start += n
    return out, kc, vc


FUZZ = {"bsz": (1, 32), "blocks_per_seq": (1, 8), "heads": (1, 16), "kv_group": (1, 16)}
