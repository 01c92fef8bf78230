"""A reproduction of LightX2V's W8A8 Triton GEMM launcher (lightx2v/common/ops/mm/triton_kernels.py:
int8_gemm_triton(a, b, a_scales, b_scales, fuse_gelu=False, output_dtype=None) and its autotuned kernel
int8_gemm_kernel): our own kernel and launcher with the same mechanism, launch pattern and arguments, called as
issue 896's reproduction and the fix's default-dtype test call it, with no output_dtype.

The launcher views the activations as (M, K), takes the (N, K) int8 weight as its transpose b (K, N), allocates C
(M, N) and launches a 2-d grid (cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N), SPLIT_K), autotuned on (M, N, K) over four
configs (BLOCK_M 256 or 128, BLOCK_N 128, BLOCK_K 128 or 64, SPLIT_K 1); each program accumulates tl.dot of int8
tiles in int32, multiplies by the per-row activation scales and per-channel weight scales in float32, converts the
tile to C's element type and stores it masked to (M, N).

Buggy, as at the fix's parent: with no output_dtype the launcher allocates C in ab_dtype, the common type of its
inputs, which for int8 activations and weights is torch.int8; the kernel's float results are converted to int8 on
store (fractions dropped, values past 127 wrapped: the issue's all-ones M = N = K = 128 product stores -128 for
128) and an int8 tensor is returned. Fixed, as PR 1078 (commit 522609e): the default is torch.float16. The two
sides differ only there (the line marked # BUG:).

The same fix also decided EVEN_K per config (the entry lightx2v-int8-gemm-even-k-tail-unmasked; the buggy launcher
passed EVEN_K=True whatever K was) and masked the scale loads; here both sides have the fixed EVEN_K and masks.
"""

import torch
import triton
import triton.language as tl

CONFIGS = [  # upstream's four, in its order
    triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 128, "SPLIT_K": 1}, num_stages=3, num_warps=8),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "SPLIT_K": 1}, num_stages=4, num_warps=8),
    triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "SPLIT_K": 1}, num_stages=3, num_warps=8),
    triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 64, "SPLIT_K": 1}, num_stages=4, num_warps=8),
]


@triton.jit
def _w8a8_gemm_kernel(A, B, A_SCALES, B_SCALES, C, M, N, K,
                      stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, SPLIT_K: tl.constexpr, EVEN_K: tl.constexpr):
    pid = tl.program_id(0)
    pid_z = tl.program_id(1)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # tiles visited GROUP_M rows of tiles at a time
    per_group = GROUP_M * tiles_n
    group = pid // per_group
    rows_in_group = min(tiles_m - group * GROUP_M, GROUP_M)
    pid_m = group * GROUP_M + (pid % rows_in_group)
    pid_n = (pid % per_group) // rows_in_group

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rows = tl.max_contiguous(tl.multiple_of(rm % M, BLOCK_M), BLOCK_M)
    cols = tl.max_contiguous(tl.multiple_of(rn % N, BLOCK_N), BLOCK_N)
    rk = pid_z * BLOCK_K + tl.arange(0, BLOCK_K)
    a_ptrs = A + rows[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = B + rk[:, None] * stride_bk + cols[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for step in range(0, tl.cdiv(K, BLOCK_K * SPLIT_K)):
        if EVEN_K:  # K % (BLOCK_K * SPLIT_K) == 0 for this config (as fixed in PR 1078, on both sides)
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            left = K - step * (BLOCK_K * SPLIT_K)
            a = tl.load(a_ptrs, mask=rk[None, :] < left, other=0)
            b = tl.load(b_ptrs, mask=rk[:, None] < left, other=0)
        acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        a_ptrs += BLOCK_K * SPLIT_K * stride_ak
        b_ptrs += BLOCK_K * SPLIT_K * stride_bk

    # per-token activation scales and per-channel weight scales (masked on both sides, as the fix has them)
    a_scale = tl.load(A_SCALES + rm, mask=rm < M, other=0.0)
    b_scale = tl.load(B_SCALES + rn, mask=rn < N, other=0.0)
    out = acc.to(tl.float32) * a_scale[:, None] * b_scale[None, :]
    out = out.to(C.dtype.element_ty)
    c_ptrs = C + rm[:, None] * stride_cm + rn[None, :] * stride_cn
    tl.store(c_ptrs, out, mask=(rm < M)[:, None] & (rn < N)[None, :])


def _even_k(args):
    return args["K"] % (args["BLOCK_K"] * args["SPLIT_K"]) == 0


_gemm = triton.autotune(configs=CONFIGS, key=["M", "N", "K"])(triton.heuristics({"EVEN_K": _even_k})(_w8a8_gemm_kernel))


def int8_gemm(a, b, a_scales, b_scales, fixed, output_dtype=None):
    """int8_gemm_triton's launch: a (..., K) int8 activations, b the (N, K) int8 weight, a_scales one per row of
    a, b_scales one per output channel ((N,) or (N, 1))."""
    out_lead = a.shape[:-1]
    a = a.view(-1, a.shape[-1])
    b = b.t()
    if a.stride(0) > 1 and a.stride(1) > 1:
        a = a.contiguous()
    if b.stride(0) > 1 and b.stride(1) > 1:
        b = b.contiguous()
    assert a.shape[1] == b.shape[0], f"incompatible dimensions {a.shape} and {b.shape}"
    M, K = a.shape
    N = b.shape[1]
    if output_dtype is None:
        if fixed:  # PR 1078
            output_dtype = torch.float16
        else:  # BUG: the inputs' common type, int8 for int8 activations and weights
            output_dtype = a.dtype if a.dtype == b.dtype else torch.promote_types(a.dtype, b.dtype)
    c = torch.empty((M, N), device=a.device, dtype=output_dtype)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]), META["SPLIT_K"])  # noqa: E731
    _gemm[grid](a, b, a_scales, b_scales, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                c.stride(0), c.stride(1), GROUP_M=8)
    return c.view(*out_lead, N)


def launch_buggy(a, b, a_scales, b_scales):
    return int8_gemm(a, b, a_scales, b_scales, fixed=False)  # no output_dtype, as issue 896 calls it


def launch_fixed(a, b, a_scales, b_scales):
    return int8_gemm(a, b, a_scales, b_scales, fixed=True)


def make_inputs(*, device, gen, m=128, n=128, k=128):
    """As the fix's test (test_cases/test_int8_triton_kernels.py, _random_case) makes them: activations a (m, k)
    and weight b (n, k) int8 from randint(-2, 3), activation scales ((arange(m) % 5) + 1) / 8 and weight scales
    ((arange(n) % 7) + 1) / 7, float32. The defaults are the shape of its default-dtype test and of the issue's
    reproduction, M = N = K = 128 (those use all-ones inputs and scales; the random case's values are the test's
    own too)."""
    a = torch.randint(-2, 3, (m, k), generator=gen, dtype=torch.int8)
    b = torch.randint(-2, 3, (n, k), generator=gen, dtype=torch.int8)
    a_scales = ((torch.arange(m, dtype=torch.float32) % 5) + 1) / 8
    b_scales = ((torch.arange(n, dtype=torch.float32) % 7) + 1) / 7
    return {"a": a.to(device), "b": b.to(device), "a_scales": a_scales.to(device), "b_scales": b_scales.to(device)}


def reference(a, b, a_scales, b_scales):
    """The test's _reference in float64: (a @ b.T) * a_scales[:, None] * b_scales[None, :]."""
    return (a.double() @ b.double().t()) * a_scales.double().reshape(-1, 1) * b_scales.double().reshape(1, -1)


# the test's shapes: M, N, K up to twice its 128 (its non-tile 130, 129 and tail 127, 129, 192 inside)
FUZZ = {"m": (1, 256), "n": (1, 256), "k": (1, 256)}
