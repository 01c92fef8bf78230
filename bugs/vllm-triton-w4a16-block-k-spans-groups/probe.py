"""A reproduction of vllm's Triton W4A16 GEMM (vllm/model_executor/kernels/linear/mixed_precision/triton_w4a16.py,
https://github.com/vllm-project/vllm/pull/39705): our own kernel with the released one's tiling
(one dequantization scale row per BLOCK_K tile, looked up from the tile's first channel) and its
launcher's RDNA (gfx1x) block sizes; buggy without clamping BLOCK_K to the group size, fixed with.
Weights are packed along N, 8 per int32 (GPTQ's sequential order), symmetric uint4b8 (zero 8).
"""

import torch
import triton
import triton.language as tl

ZP_BIAS = 8


@triton.jit
def _w4a16_gemm(a_ptr, b_ptr, s_ptr, c_ptr, M, N, K, group_size,
                stride_am, stride_bk, stride_cm,
                ZP: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BLOCK_K)):
        rk = kt * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        words = tl.load(b_ptr + rk[:, None] * stride_bk + (rn // 8)[None, :],
                        mask=(rk[:, None] < K) & (rn[None, :] < N), other=0)
        q = (words >> ((rn % 8) * 4)[None, :]) & 0xF
        g = (kt * BLOCK_K) // group_size  # one group for the whole tile: the released lookup
        s = tl.load(s_ptr + g * N + rn, mask=rn < N, other=1.0)
        w = (q - ZP).to(a.dtype) * s[None, :]
        acc += tl.dot(a, w, out_dtype=tl.float32)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def _launch(a, b_q, scales, clamp):
    M, K = a.shape
    N = scales.shape[1]
    group_size = K // scales.shape[0]
    # the launcher's block sizes for RDNA (gfx1x)
    if M <= 32:
        BM, BN, BK = 32, 32, 64
    elif M <= 64:
        BM, BN, BK = 64, 64, 32
    else:
        BM, BN, BK = 128, 32, 64
    if clamp and group_size < BK:  # the fix; # BUG: without it a tile of BK > group_size rows spans groups
        BK = group_size
    c = torch.empty(M, N, dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
    _w4a16_gemm[grid](a, b_q, scales, c, M, N, K, group_size, a.stride(0), b_q.stride(0), c.stride(0),
                      ZP=ZP_BIAS, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK)
    return c


def launch_buggy(a, b_q, scales, w_int):
    return _launch(a, b_q, scales, False)


def launch_fixed(a, b_q, scales, w_int):
    return _launch(a, b_q, scales, True)


def make_inputs(*, device, gen, m=1, k=256, n=256, group=32):
    """As upstream's test: a = 0.25 * randn [m, k], 4-bit weights [k, n] packed along n, scales
    0.05 * rand per group; fp16. group is one of the supported sizes 32, 64, 128, 256 (rounded up to
    a power of two, at least 32); k is rounded up to a multiple of it and n to a multiple of 8."""
    group = max(32, min(256, triton.next_power_of_2(group)))
    k = -(-k // group) * group
    n = -(-n // 8) * 8
    a = (0.25 * torch.randn(m, k, generator=gen)).to(torch.float16)
    w = torch.randint(0, 16, (k, n), generator=gen, dtype=torch.int32)
    shifts = torch.arange(8, dtype=torch.int32) * 4
    b_q = torch.sum((w.view(k, n // 8, 8) & 0xF) << shifts, dim=2, dtype=torch.int32)
    scales = (0.05 * torch.rand(k // group, n, generator=gen)).to(torch.float16)
    return {"a": a.to(device), "b_q": b_q.to(device), "scales": scales.to(device),
            "w_int": w.to(device)}


def reference(a, b_q, scales, w_int):
    g = a.shape[1] // scales.shape[0]
    return a @ ((w_int - ZP_BIAS).to(a.dtype) * scales.repeat_interleave(g, dim=0))


FUZZ = {"m": (1, 128), "k": (32, 1024), "n": (8, 1024), "group": (32, 256)}
