"""Glue for DeepSpeed's fp8-weight GEMM, deepspeed/ops/fp_quantizer/fp8_gemm_triton.py: its own
launcher matmul_fp8_triton(inp, weight, scale, quantization_group_size), the one
deepspeed.ops.fp_quantizer.matmul_fp8 calls where Triton is supported (OptimizedLinear with an fp8
QuantizationConfig). It launches matmul_kernel_fp8_bf16 for bf16 activations, which dequantizes each
fp8 weight tile to bf16 inside the K loop and multiplies it by its group's scale.

The weights are made here in DeepSpeed's fp8 format as FP_Quantize (a CUDA op: csrc/fp_quantizer)
leaves them: one uint8 per weight (sign in bit 7, a 4-bit exponent with bias 7 in bits 6-3, a 3-bit
mantissa), groups of ``quantization_group_size`` consecutive weights of the flattened (K, N) matrix
scaled by q_range / amax with q_range 480 (the format's largest value, exponent 15 and mantissa 7);
``get_scales()`` hands the GEMM the inverse, amax / 480, one float32 per group. Exponents below the
smallest normal are clipped to it, as the CUDA quantizer clips them (no subnormal codes)."""

import torch

from harness.bugs.source import load

GROUP = 128  # quantization_group_size of DeepSpeed's test_fp8_gemm.py (a config, not a size to fuzz)
Q_RANGE = 480.0


def _run(variant, inp, weight, scale):
    return load(__file__, variant).matmul_fp8_triton(inp, weight, scale, GROUP)


def launch_buggy(inp, weight, scale):
    return _run("buggy", inp, weight, scale)


def launch_fixed(inp, weight, scale):
    return _run("fixed", inp, weight, scale)


def _encode(x):
    """float32 values (already scaled into +-480) -> DeepSpeed fp8 codes (uint8): round to nearest
    with 3 mantissa bits, exponents clipped to 1..15 (bias 7)."""
    sign = (x < 0).to(torch.int32)
    a = x.abs().clamp(min=2.0 ** -6, max=Q_RANGE)
    e = torch.floor(torch.log2(a)).clamp(-6, 8)
    m = torch.round((a / torch.pow(2.0, e) - 1.0) * 8.0)
    carry = m >= 8
    e = torch.where(carry, e + 1, e)
    m = torch.where(carry, torch.zeros_like(m), m)
    over = e > 8
    e = torch.where(over, torch.full_like(e, 8), e)
    m = torch.where(over, torch.full_like(m, 7), m)
    code = (sign << 7) | ((e.to(torch.int32) + 7) << 3) | m.to(torch.int32)
    return code.to(torch.uint8)


def make_inputs(*, device, gen, m=1, k=4096, n=8192):
    """As DeepSpeed's tests/unit/ops/fp_quantizer/test_fp8_gemm.py makes them: bf16 activations
    randn(M, H) and a bf16 weight randn(H, N) (H 4096, N 8192; M from 1 to 2048) quantized to fp8 in
    groups of 128 (the quantizer's layout, made here in torch: see the module's docstring)."""
    x = torch.randn(m, k, generator=gen).to(torch.bfloat16)
    w = torch.randn(k, n, generator=gen).to(torch.bfloat16).float()
    groups = w.reshape(-1, GROUP)
    amax = groups.abs().amax(dim=1).clamp(min=1e-12)
    codes = _encode(groups * (Q_RANGE / amax)[:, None]).reshape(k, n)
    scale = (amax / Q_RANGE).to(torch.float32)
    return {"inp": x.to(device), "weight": codes.to(device), "scale": scale.to(device)}


def reference(inp, weight, scale):
    """inp @ W where each weight is its fp8 code's value times its group's scale: (-1)**s *
    2**(e - 7) * (1 + mantissa / 8) * scale (the format FP_Quantize writes and its dequantize reads)."""
    c = weight.to(torch.int64).cpu()
    sign = torch.where((c & 0x80) != 0, -1.0, 1.0).to(torch.float64)
    e = ((c >> 3) & 0xF).to(torch.float64)
    mant = (c & 0x7).to(torch.float64)
    value = sign * torch.pow(2.0, e - 7.0) * (1.0 + mant / 8.0)
    k, n = c.shape
    w = (value.reshape(-1, GROUP) * scale.to(torch.float64).cpu().reshape(-1, 1)).reshape(k, n)
    return (inp.to(torch.float64).cpu() @ w).to(inp.device)


FUZZ = {"m": (1, 2048)}
