"""A reproduction of LightX2V's W8A8 Triton GEMM (lightx2v/common/ops/mm/triton_kernels.py: the autotuned kernel
int8_gemm_kernel and its launcher int8_gemm_triton(a, b, a_scales, b_scales, fuse_gelu=False, output_dtype=None),
which the int8 per-channel MMWeight of the Wan/HunyuanVideo DiT blocks and the T5 encoder's quantized linear call
with the int8 activations of int8_quantize_triton): our own kernel and launcher with the same mechanism, launch
pattern and arguments.

The launcher views the activations as (M, K), takes the (N, K) int8 weight as its transpose b (K, N) (strides
1 and K, no copy), allocates C (M, N) and launches a 2-d grid (cdiv(M, BLOCK_M) * cdiv(N, BLOCK_N), SPLIT_K),
autotuned on (M, N, K) over four configs, BLOCK_M 256 or 128, BLOCK_N 128, BLOCK_K 128 or 64, SPLIT_K 1. Each
program takes its (pid_m, pid_n) in groups of GROUP_M = 8 rows of tiles, clamps its rows and columns with
% M and % N for the loads, walks K in steps of BLOCK_K * SPLIT_K accumulating tl.dot(a, b) in int32, then
multiplies the tile by the per-row activation scales and the per-channel weight scales and stores the tile
masked to (M, N) in C's dtype.

Buggy, as at the fix's parent (issue 896): the launcher passes EVEN_K=True whatever K is, so the K loop's loads
are unmasked; for a K that is not a multiple of the chosen BLOCK_K the last step loads whole BLOCK_K columns,
past the end of each activation row (into the next row's first values) and past the end of each weight row
(into the next output channel's), and their products enter the sum. Fixed, as PR 1078 (commit 522609e): EVEN_K
is K % (BLOCK_K * SPLIT_K) == 0, decided per config by triton.heuristics, and the K loop masks its loads with
k_remaining where it is False. The two sides differ only there (the lines marked # BUG:).

Two other changes of the same fix are left out on purpose, neither this entry's bug: the fix masked the scale
loads (a_scales at rows >= M, b_scales at columns >= N: values that only ever reach the rows and columns the
store masks off); here both sides mask them. And it made float16 the default output dtype instead of the
inputs' int8 (the entry lightx2v-int8-gemm-output-defaults-int8); here the glue passes an output dtype, bfloat16,
as LightX2V's own callers do (MMWeight passes its infer_dtype, the T5 linear bfloat16) and as the fix's K-tail
test does.
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
        if EVEN_K:  # BUG: (buggy side) always taken, the launcher says EVEN_K=True for every K
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


# buggy: EVEN_K comes from the launcher; fixed (PR 1078): decided per config
_gemm_buggy = triton.autotune(configs=CONFIGS, key=["M", "N", "K"])(_w8a8_gemm_kernel)
_gemm_fixed = triton.autotune(configs=CONFIGS, key=["M", "N", "K"])(
    triton.heuristics({"EVEN_K": _even_k})(_w8a8_gemm_kernel))

def int8_gemm(a, b, a_scales, b_scales, output_dtype, fixed):
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
    c = torch.empty((M, N), device=a.device, dtype=output_dtype)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]), META["SPLIT_K"])  # noqa: E731
    args = (a, b, a_scales, b_scales, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1))
    if fixed:
        _gemm_fixed[grid](*args, GROUP_M=8)
    else:
        _gemm_buggy[grid](*args, GROUP_M=8, EVEN_K=True)  # BUG: EVEN_K hard-coded, whatever K is
    return c.view(*out_lead, N)


OUTPUT_DTYPE = torch.bfloat16  # what the fix's K-tail test passes, and LightX2V's T5 int8 linear


def launch_buggy(a, b, a_scales, b_scales):
    return int8_gemm(a, b, a_scales, b_scales, OUTPUT_DTYPE, fixed=False)


def launch_fixed(a, b, a_scales, b_scales):
    return int8_gemm(a, b, a_scales, b_scales, OUTPUT_DTYPE, fixed=True)


def make_inputs(*, device, gen, m=130, n=129, k=128):
    """As the fix's test (test_cases/test_int8_triton_kernels.py, _random_case) makes them: activations a (m, k)
    and weight b (n, k) int8 from randint(-2, 3), activation scales ((arange(m) % 5) + 1) / 8 and weight scales
    ((arange(n) % 7) + 1) / 7, float32. The defaults are its non-tile shape (130, 129, 128)
    (test_int8_gemm_handles_non_tile_mn), K a multiple of every BLOCK_K; its tail cases take K = 127, 129
    (and 64, 192, multiples of 64 only), its random case (130, 129, 127)."""
    a = torch.randint(-2, 3, (m, k), generator=gen, dtype=torch.int8)
    b = torch.randint(-2, 3, (n, k), generator=gen, dtype=torch.int8)
    a_scales = ((torch.arange(m, dtype=torch.float32) % 5) + 1) / 8
    b_scales = ((torch.arange(n, dtype=torch.float32) % 7) + 1) / 7
    return {"a": a.to(device), "b": b.to(device), "a_scales": a_scales.to(device), "b_scales": b_scales.to(device)}


def reference(a, b, a_scales, b_scales):
    """The test's _reference in float64: (a @ b.T) * a_scales[:, None] * b_scales[None, :]."""
    return (a.double() @ b.double().t()) * a_scales.double().reshape(-1, 1) * b_scales.double().reshape(1, -1)


# the test's shapes: M and N up to twice its 130 and 129 (non-tile against BLOCK_M 128/256 and BLOCK_N 128),
# K up to twice its 128 (its tail cases 127, 129, 192 inside)
FUZZ = {"m": (1, 260), "n": (1, 258), "k": (1, 256)}
