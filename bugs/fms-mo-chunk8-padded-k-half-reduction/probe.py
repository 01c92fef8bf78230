"""A reproduction of FMS Model Optimizer's chunk-truncating Triton matmul
(fms_mo/custom_ext_kernels/triton_kernels.py, tl_matmul_chunk_truncate, before and after
https://github.com/foundation-model-stack/fms-model-optimizer/commit/262db69c4a76a1f653d21cde19d09352c60ab983):
our own kernel and launcher with the upstream ones' structure. The kernel computes C = A @ B with one
K tile ("chunk") per loop step, each chunk's fp32 partial product optionally rounded and truncated to
fewer mantissa bits before it is added (the accelerator being emulated). The launcher turns
chunk_size=8 into chunk 16 for fp16/bf16 by dilation (zeros between the elements of A's rows and B's
columns: [M, 2K] and [2K, N]). Buggy: K is read before the dilation and passed with the dilated
tensors, as 0f7201e did; fixed: K is read after it, as 262db69 does.
"""

import torch
import triton
import triton.language as tl

TRUN_BITS = 0  # the launcher's default chunk_trun_bits (no truncation), as upstream's plain test calls it


@triton.jit
def _chunk_matmul(a_ptr, b_ptr, c_ptr, M, N, K, s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
                  TRUN: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  GM: tl.constexpr):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    per_group = GM * tiles_n
    first_m = (pid // per_group) * GM
    rows_in_group = min(tiles_m - first_m, GM)
    tm = first_m + (pid % per_group) % rows_in_group
    tn = (pid % per_group) // rows_in_group

    rm = (tm * BM + tl.arange(0, BM)) % M
    rn = (tn * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    pa = a_ptr + rm[:, None] * s_am + rk[None, :] * s_ak
    pb = b_ptr + rk[:, None] * s_bk + rn[None, :] * s_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for step in range(0, tl.cdiv(K, BK)):
        left = K - step * BK
        x = tl.load(pa, mask=rk[None, :] < left, other=0.0)
        y = tl.load(pb, mask=rk[:, None] < left, other=0.0)
        part = tl.dot(x, y, input_precision="ieee")
        if TRUN > 0:  # round the chunk's partial sum to nearest, then drop TRUN mantissa bits
            bits = part.to(tl.uint32, bitcast=True) + (1 << (TRUN - 1))
            part = (bits & ~((1 << TRUN) - 1)).to(tl.float32, bitcast=True)
        acc += part
        pa += BK * s_ak
        pb += BK * s_bk

    om = tm * BM + tl.arange(0, BM)
    on = tn * BN + tl.arange(0, BN)
    tl.store(c_ptr + om[:, None] * s_cm + on[None, :] * s_cn, acc,
             mask=(om[:, None] < M) & (on[None, :] < N))


def _matmul(a, b, chunk, read_k_after_padding):
    assert a.shape[1] == b.shape[0] and a.dtype == b.dtype
    a = a.contiguous()
    M, K = a.shape
    N = b.shape[1]
    out_dtype = a.dtype
    if chunk == 8 and a.dtype in (torch.float16, torch.bfloat16):
        # dilation: a chunk of 8 real products inside a tile of 16 that Triton's dot accepts
        a2 = torch.zeros(M, 2 * K, dtype=a.dtype, device=a.device)
        a2[:, ::2] = a
        b2 = torch.zeros(2 * K, N, dtype=b.dtype, device=b.device)
        b2[::2, :] = b
        a, b = a2, b2
        chunk = 16
        # BUG: without the fix K stays the undilated size, so the K loop covers half of the 2K columns
        if read_k_after_padding:  # the fix (262db69): read the sizes after the dilation
            M, K = a.shape
            N = b.shape[1]
    else:
        pow2 = chunk > 0 and (chunk & (chunk - 1)) == 0
        chunk = max(chunk, 16) if pow2 else 16
    c = torch.zeros(M, N, dtype=torch.float32, device=a.device)
    if M < 1024 or N < 1024:
        cfg = dict(BM=64, BN=32, num_warps=2, num_stages=5)
    else:
        cfg = dict(BM=128, BN=64, num_warps=4, num_stages=4)
    grid = (triton.cdiv(M, cfg["BM"]) * triton.cdiv(N, cfg["BN"]),)
    _chunk_matmul[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), TRUN=TRUN_BITS, BK=chunk, GM=8, **cfg)
    return c.to(out_dtype)


def launch_buggy(a, b, chunk):
    return _matmul(a, b, chunk, False)


def launch_fixed(a, b, chunk):
    return _matmul(a, b, chunk, True)


def make_inputs(*, device, gen, m=256, k=256, n=256, chunk=16):
    """A [m, k] and B [k, n] of randn cast to float16, as upstream's test_triton_matmul_fp makes them
    (m = n = k there). ``chunk`` is the launcher's chunk_size (its default 16; 8 is the dilated
    emulation the bug is in)."""
    a = torch.randn(m, k, generator=gen).to(torch.float16)
    b = torch.randn(k, n, generator=gen).to(torch.float16)
    return {"a": a.to(device), "b": b.to(device), "chunk": int(chunk)}


def reference(a, b, chunk):
    """A @ B: the chunking (and the dilation's zeros) change no product, and with no truncation the
    emulated accumulator is plain fp32."""
    return a @ b


FUZZ = {"m": (1, 1024), "k": (1, 1024), "n": (1, 1024)}
