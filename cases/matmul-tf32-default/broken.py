"""fp32 matmul with ``tl.dot``'s default precision: TF32 on NVIDIA tensor cores.

The kernel is the tutorial's tiled matmul with fp32 inputs and an fp32 accumulator,
and it looks like an fp32 matmul. But for fp32 operands ``tl.dot`` defaults to
``input_precision="tf32"`` wherever the hardware has TF32 tensor cores (NVIDIA
Ampere and later): each operand keeps 10 of its 23 mantissa bits before the
multiply, a relative error of up to 5e-4 per input (1e-3 if the hardware
truncates). Summed over K products of ``randn`` inputs that is an absolute error of
about ``3e-4 * sqrt(K)`` (more if truncated): around 1e-2 here, where an fp32 result
is good to a few 1e-4.

``torch.matmul`` on fp32 does not do this unless asked
(``torch.backends.cuda.matmul.allow_tf32`` is False by default), so a Triton kernel
compared with ``torch.matmul`` at fp32 tolerances fails, and one compared at loose
tolerances quietly carries TF32 error into whatever needed fp32.

Triton's interpreter computes ``tl.dot`` with ``numpy.matmul`` in full fp32 and
ignores ``input_precision``: there the kernel is exact and the bug is hidden.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < K - k), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K - k) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)  # BUG: fp32 operands default to input_precision="tf32" (10-bit mantissa)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    _, N = b.shape
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    return c


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
