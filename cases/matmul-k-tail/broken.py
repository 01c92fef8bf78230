"""Tiled matmul with no mask on the K loop: the last K block multiplies whatever lies past the end.

This is the kernel of Triton's matrix-multiplication tutorial: each program computes
one ``BLOCK_M x BLOCK_N`` tile of ``c = a @ b`` by walking along K, ``BLOCK_K``
columns of ``a`` and ``BLOCK_K`` rows of ``b`` at a time, and accumulating
``tl.dot`` of the two tiles in fp32. Rows of ``a`` and columns of ``b`` past M and N
are wrapped back in range with ``% M`` and ``% N``, and the store is masked, so the
M and N tails are safe.

The K tail is not. The loop runs ``cdiv(K, BLOCK_K)`` times, and when K is not a
multiple of ``BLOCK_K`` its last iteration loads a full ``BLOCK_K`` anyway: columns
``K, K+1, ...`` of each row of ``a`` (which, row-major, are the first elements of
the *next* row) and rows ``K, K+1, ...`` of ``b`` (which lie past the end of ``b``).
Their products are added into every element of ``c``. Nothing complains: a GPU
reads whatever memory follows ``b``, and if that happens to be zeros the result is
even right. Here ``b`` sits inside NaN padding, so every element of ``c`` is NaN.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # Grouped ordering of the tiles, for L2 reuse (as in the tutorial).
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs)  # BUG: no mask: the last block reads columns K.. of a (the next row's start)
        b = tl.load(b_ptrs)  # BUG: no mask: the last block reads rows K.. of b, past its end
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + offs_cm[:, None] * stride_cm + offs_cn[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def matmul(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    _, N = b.shape
    grid = (triton.cdiv(M, 128) * triton.cdiv(N, 256),)
    matmul_kernel[grid](a, b, c, M, N, K,
                        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                        BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3)
    return c


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
