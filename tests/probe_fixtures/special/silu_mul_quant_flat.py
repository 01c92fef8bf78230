"""silu_mul_quant.py with the dequantized result as one vector (tokens * hidden): a caller that flattens the
tokens, a 1-D output where a group of 128 is no output row of its own."""

import torch

from group_quant import TOLERANCE, silu_mul_quant_flat, silu_mul_quant_flat_leaky  # noqa: F401


def make_inputs(*, device, gen, tokens=8, hidden=512):
    return {"x": torch.randn(tokens, 2 * hidden, generator=gen).to(device)}


def reference(x):
    gate, up = x.double().chunk(2, dim=-1)
    return (torch.nn.functional.silu(gate) * up).reshape(-1)
