"""Reproduction (our own code) of TorchInductor's fused matmul template before and after
pytorch/torchdynamo#782 (torchinductor/codegen/triton_mm.j2 and triton_ops/matmul.py,
August 2022).

Inductor compiled `relu(a @ b)` on float32 tensors into one Triton kernel: a tiled matmul
with the pointwise epilogue fused. The template accumulated with `tl.dot(a, b)` and no
precision argument, and Triton's default for float32 operands on NVIDIA GPUs is TF32
(10-bit mantissa inputs), whatever torch.backends.cuda.matmul says. PyTorch's own default
is full float32 for matmuls, so the compiled model silently computed its matmuls with
about three decimal digits where eager mode gave seven. The fix passes the PyTorch flag
into the kernel as a constexpr and hands it to tl.dot.
"""

import torch
import triton
import triton.language as tl


def _torch_allows_tf32() -> bool:
    """PyTorch's setting for float32 matmuls on CUDA (off unless the user turned it on)."""
    m = torch.backends.cuda.matmul
    prec = getattr(m, "fp32_precision", None)
    if isinstance(prec, str) and prec != "none":
        return prec == "tf32"
    return bool(m.allow_tf32)


@triton.jit
def _mm_relu(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
             FOLLOW_TORCH: tl.constexpr, ALLOW_TF32: tl.constexpr,
             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BLOCK_N)
    rm = (pid // grid_n) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = (pid % grid_n) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if FOLLOW_TORCH:
            if ALLOW_TF32:
                acc += tl.dot(a, b, input_precision="tf32")
            else:
                acc += tl.dot(a, b, input_precision="ieee")
        else:
            acc += tl.dot(a, b)  # BUG: Triton's default precision for fp32 operands is TF32, not PyTorch's setting
    acc = tl.maximum(acc, 0.0)  # the fused epilogue (relu)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def mm_relu(a, b, fixed, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, BLOCK_M) * triton.cdiv(N, BLOCK_N),)
    _mm_relu[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                   FOLLOW_TORCH=fixed, ALLOW_TF32=_torch_allows_tf32() if fixed else False,
                   BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return c
