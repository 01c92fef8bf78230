"""Glue for GPTQModel's Triton quant_matmul (gptqmodel/nn_modules/triton_utils/dequant.py), the forward
of its Triton QuantLinear: dequant() of GPTQ-packed 4-bit weights, then input @ W.

Weights are packed 8 to an int32 along the input dimension, zeros 8 to an int32 along the output
dimension (GPTQ's layout); the reference multiplies by the unpacked integers' dequantization.
"""

import torch

from harness.bugs.source import load

BITS = 4


def _run(variant, x, qweight, scales, qzeros, g_idx, q, z):
    mod = load(__file__, variant)
    return mod.quant_matmul(x, qweight, scales, qzeros, g_idx, BITS, 32, (1 << BITS) - 1)


def launch_buggy(x, qweight, scales, qzeros, g_idx, q, z):
    return _run("buggy", x, qweight, scales, qzeros, g_idx, q, z)


def launch_fixed(x, qweight, scales, qzeros, g_idx, q, z):
    return _run("fixed", x, qweight, scales, qzeros, g_idx, q, z)


def _as_int32(words):
    return torch.where(words >= 2**31, words - 2**32, words).to(torch.int32)


def make_inputs(*, device, gen, m=4, groups=2, group_size=128, out_features=64, bf16=0):
    """x [m, in_features] in float16 (bf16=1: bfloat16); a 4-bit GPTQ layer of `groups` groups of
    `group_size` rows (rounded up to a multiple of 8, a packed word) and `out_features` columns
    (rounded up to a multiple of 8); scales in x's dtype."""
    dtype = torch.bfloat16 if bf16 else torch.float16
    group_size = -(-group_size // 8) * 8
    out_features = -(-out_features // 8) * 8
    k = groups * group_size
    q = torch.randint(0, 16, (k, out_features), generator=gen, dtype=torch.int64)
    z = torch.randint(0, 16, (groups, out_features), generator=gen, dtype=torch.int64)
    shifts = torch.arange(8) * 4
    qweight = _as_int32((q.view(k // 8, 8, out_features) << shifts[None, :, None]).sum(dim=1))
    qzeros = _as_int32((z.view(groups, out_features // 8, 8) << shifts[None, None, :]).sum(dim=2))
    scales = (torch.rand(groups, out_features, generator=gen) * 0.02 + 0.001).to(dtype)
    x = torch.randn(m, k, generator=gen).to(dtype)
    g_idx = (torch.arange(k) // group_size).to(torch.int32)
    return {"x": x.to(device), "qweight": qweight.to(device), "scales": scales.to(device),
            "qzeros": qzeros.to(device), "g_idx": g_idx.to(device), "q": q.to(device), "z": z.to(device)}


def reference(x, qweight, scales, qzeros, g_idx, q, z):
    g = g_idx.long()
    return x @ ((q - z[g]) * scales[g])


FUZZ = {"m": (1, 64), "groups": (1, 4), "out_features": (8, 256)}
