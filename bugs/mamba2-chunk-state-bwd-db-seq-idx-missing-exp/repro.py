"""Our own reproduction of the B-gradient of Mamba-2's chunk state
(_chunk_state_bwd_db_kernel in mamba_ssm/ops/triton/ssd_chunk_state.py), on the packed
variable-length path (seq_idx given), before and after a6a1dae. One head, one batch row,
no ddA_cumsum output.

A chunk's final state is sum_m exp(dA_cs[last] - dA_cs[m]) * dt[m] * x[m] (outer) B[m] over
the positions m of the sequence that is still running at the chunk's end (a packed
sequence that ended inside the chunk does not carry into the next chunk). With dstates
the gradient of that state (hdim x dstate), the gradient of B is therefore

    dB[m] = [seq_idx[m] == seq_idx[last]] * exp(min(dA_cs[last] - dA_cs[m], 0)) * dt[m] * (x[m] @ dstates)

Each program owns BLOCK_M positions and BLOCK_N state columns of one chunk.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _chunk_state_bwd_db_kernel(x_ptr, dstates_ptr, dt_ptr, dA_cs_ptr, seq_idx_ptr, db_ptr,
                               seqlen, hdim, dstate, chunk_size,
                               s_x_l, s_ds_c, s_ds_p, s_dt_c, s_dA_c, s_db_l,
                               HAS_SEQ_IDX: tl.constexpr, FIXED: tl.constexpr,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    c = tl.program_id(2)
    first = c * chunk_size
    chunk_len = tl.minimum(chunk_size, seqlen - first)
    pos = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    st = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    p = tl.arange(0, BLOCK_K)

    x = tl.load(x_ptr + (first + pos)[:, None] * s_x_l + p[None, :],
                mask=(pos[:, None] < chunk_len) & (p[None, :] < hdim), other=0.0)
    ds = tl.load(dstates_ptr + c * s_ds_c + p[:, None] * s_ds_p + st[None, :],
                 mask=(p[:, None] < hdim) & (st[None, :] < dstate), other=0.0)
    db = tl.dot(x, ds.to(x.dtype))  # the state gradient in the activations' dtype, as upstream

    dA_last = tl.load(dA_cs_ptr + c * s_dA_c + chunk_size - 1)
    dA_m = tl.load(dA_cs_ptr + c * s_dA_c + pos, mask=pos < chunk_size, other=0.0)
    dt_m = tl.load(dt_ptr + c * s_dt_c + pos, mask=pos < chunk_size, other=0.0)
    if HAS_SEQ_IDX:
        sid_m = tl.load(seq_idx_ptr + first + pos, mask=pos < chunk_len, other=-1)
        sid_last = tl.load(seq_idx_ptr + first + chunk_len - 1)
        if FIXED:
            scale = tl.where(sid_m == sid_last, tl.exp(tl.minimum(dA_last - dA_m, 0.0)), 0.0)
        else:
            scale = tl.where(sid_m == sid_last, tl.minimum(dA_last - dA_m, 0.0), 0.0)  # BUG: the log of the decay, exp() left out
    else:
        scale = tl.exp(tl.minimum(dA_last - dA_m, 0.0))
    db = db * (scale * dt_m)[:, None]
    tl.store(db_ptr + (first + pos)[:, None] * s_db_l + st[None, :], db,
             mask=(pos[:, None] < chunk_len) & (st[None, :] < dstate))


def chunk_state_bwd_db(x, dstates, dt, dA_cumsum, seq_idx, chunk_size, *, fixed):
    """x (seqlen, hdim); dstates (nchunks, hdim, dstate); dt, dA_cumsum (nchunks, chunk_size),
    padded past the sequence end with dt = 0; seq_idx (seqlen,) int32 or None. Returns dB (seqlen, dstate) fp32."""
    seqlen, hdim = x.shape
    nchunks, _, dstate = dstates.shape
    db = torch.empty(seqlen, dstate, device=x.device, dtype=torch.float32)
    BLOCK_M, BLOCK_N = 32, max(16, min(64, triton.next_power_of_2(dstate)))
    BLOCK_K = max(16, triton.next_power_of_2(hdim))
    grid = (triton.cdiv(chunk_size, BLOCK_M), triton.cdiv(dstate, BLOCK_N), nchunks)
    _chunk_state_bwd_db_kernel[grid](x, dstates, dt, dA_cumsum, seq_idx if seq_idx is not None else x, db,
                                     seqlen, hdim, dstate, chunk_size,
                                     x.stride(0), dstates.stride(0), dstates.stride(1), dt.stride(0),
                                     dA_cumsum.stride(0), db.stride(0),
                                     HAS_SEQ_IDX=seq_idx is not None, FIXED=fixed,
                                     BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return db
