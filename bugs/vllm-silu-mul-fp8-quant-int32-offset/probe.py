"""Glue for vllm's fused SiLU-and-mul + per-token-group fp8 quantization used before DeepGEMM
MoE (silu_mul_per_token_group_quant_fp8_colmajor in
vllm/model_executor/layers/quantization/utils/fp8_utils.py).

The launcher takes input [M, N] (gate | up halves) and returns the fp8 output [M, N/2]
and its per-128-column scales (column-major). The glue returns the dequantized product
q * scale, compared with silu(gate) * up in float64 within fp8's precision. The overflow
needs M * N > 2**31 (GPU sizes: M = 524,416 and N = 4096, a 4.3 GB fp16 input, the
shape of the upstream report); at the interpreter sizes both versions agree.
"""

import logging
import types

import torch
import triton
import triton.language as tl

from harness.bugs.source import load

# Note: make_inputs draws values whose fp8 codes are exact, so the result is exact up to the
# fp16 rounding of silu. Random values would also meet a Triton 3.7 interpreter defect: its
# fp32 -> fp8e4m3 conversion loses the carry when a value rounds up to the next power of
# two (126.0 -> 64.0 instead of 128.0), which makes both versions differ under the
# interpreter.
TOLERANCE = {"rtol": 1e-2, "atol": 1e-3}


def _none(*a, **k):
    return None


_PLATFORM = types.SimpleNamespace(
    fp8_dtype=lambda: torch.float8_e4m3fn, is_fp8_fnuz=lambda: False, is_rocm=lambda: False,
    is_cuda=lambda: True, is_xpu=lambda: False, get_device_name=lambda *a: "")

_Q = "vllm.model_executor.layers.quantization.utils"
STUBS = {
    "vllm.triton_utils": {"triton": triton, "tl": tl},
    "vllm.envs": {"VLLM_ROCM_FP8_PADDING": False},
    "vllm._custom_ops": {},
    "vllm.logger": {"init_logger": logging.getLogger},
    _Q + ".quant_utils": {"get_fp8_min_max": _none},
    _Q + ".w8a8_utils": {"all_close_1d": _none, "per_tensor_dequantize": _none},
    "vllm.model_executor.parameter": {"BlockQuantScaleParameter": object, "ChannelQuantScaleParameter": object,
                                      "PerTensorScaleParameter": object},
    "vllm.model_executor.utils": {"set_weight_attrs": _none},
    "vllm.platforms": {"current_platform": _PLATFORM},
    "vllm.utils.deep_gemm": {"get_tma_aligned_size": _none, "is_deep_gemm_e8m0_used": lambda: False,
                             "transform_sf_into_required_layout": _none},
    "vllm.utils.torch_utils": {"direct_register_custom_op": _none},
}


def _launch(variant, x):
    mod = load(__file__, variant, stubs=STUBS)
    q, scales = mod.silu_mul_per_token_group_quant_fp8_colmajor(x, use_ue8m0=False)
    return q.float() * scales.repeat_interleave(128, dim=1)  # dequantized [M, N/2]


def launch_buggy(x):
    return _launch("buggy", x)


def launch_fixed(x):
    return _launch("fixed", x)


def _draw(m, n, gen):
    """gate is one value per row; up is +-2**-k. Every quantized value is then 448 * 2**-j
    up to rounding in the last bit of fp32, a value fp8 e4m3 holds exactly (see the note)."""
    gate = (torch.randn(m, 1, generator=gen) * 2).expand(m, n // 2)
    k = torch.randint(0, 7, (m, n // 2), generator=gen).to(torch.float32)
    sign = torch.randint(0, 2, (m, n // 2), generator=gen).to(torch.float32) * 2 - 1
    return torch.cat([gate, sign * torch.exp2(-k)], dim=1).to(torch.float16)


def make_inputs(*, device, gen, m=256, n=512):
    if m * n > 2**28:  # GPU sizes: draw one row block at a time, straight onto the device
        x = torch.empty(m, n, dtype=torch.float16, device=device)
        for i in range(0, m, 65536):
            x[i:i + 65536] = _draw(min(65536, m - i), n, gen).to(device)
        return {"x": x}
    return {"x": _draw(m, n, gen).to(device)}


def reference(x):
    gate, up = x.chunk(2, dim=-1)
    return gate * torch.sigmoid(gate) * up


GPU_SIZES = {"m": 524_416, "n": 4096}
FUZZ = {"m": (128, 1024)}
