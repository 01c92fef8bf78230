"""The fused silu-and-mul before a per-token-group fp8 quantizer (group_quant.py's kernel with SILU): the input is
[gate | up], 2 * hidden wide, the result silu(gate) * up quantized per group of 128 and dequantized. The float64
reference does not quantize: silu(gate) * up itself, within e4m3's half step (TOLERANCE)."""

import torch

from group_quant import TOLERANCE, silu_mul_quant, silu_mul_quant_colmajor  # noqa: F401


def make_inputs(*, device, gen, tokens=8, hidden=512):
    return {"x": torch.randn(tokens, 2 * hidden, generator=gen).to(device)}


def reference(x):
    gate, up = x.double().chunk(2, dim=-1)
    return torch.nn.functional.silu(gate) * up
