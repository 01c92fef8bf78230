"""Glue for GPTQModel's Triton dequant (gptqmodel/nn_modules/triton_utils/dequant.py).

The project's launcher dequant(dtype, qweight, scales, qzeros, g_idx, bits, pack_bits, maxq) is
called on integer weights and zero points packed here the way GPTQ packs them (GPTQModel's CPU
packer, PackableQuantLinear.pack): for 2, 4 and 8 bits, 32 // bits values per int32 word; for 3
bits, 32 values in 3 words as 10-1-10-1-10. Weights are packed along the input dimension, zeros
along the output dimension. The reference dequantizes the unpacked integers: (q - z) * scale.
"""

import torch

from harness.bugs.source import load

STUBS = {"gptqmodel.utils.torch": {"HAS_XPU": False}}
PACK_BITS = 32


def _run(variant, qweight, scales, qzeros, g_idx, bits):
    mod = load(__file__, variant, stubs=STUBS)
    return mod.dequant(torch.float16, qweight, scales, qzeros, g_idx, int(bits.item()), PACK_BITS,
                       (1 << int(bits.item())) - 1)


def launch_buggy(qweight, scales, qzeros, g_idx, bits, q, z):
    return _run("buggy", qweight, scales, qzeros, g_idx, bits)


def launch_fixed(qweight, scales, qzeros, g_idx, bits, q, z):
    return _run("fixed", qweight, scales, qzeros, g_idx, bits)


def _words(v):
    """int64 words (0 .. 2**32 - 1) as the int32 bit patterns GPTQ stores."""
    v = v & 0xFFFFFFFF
    return torch.where(v >= 2**31, v - 2**32, v).to(torch.int32)


def _pack(vals, bits):
    """Pack along dim 0: (n, m) values of `bits` bits -> (n * bits // 32, m) int32 words."""
    vals = vals.to(torch.int64)
    n, m = vals.shape
    if bits != 3:
        per = 32 // bits
        out = torch.zeros(n // per, m, dtype=torch.int64)
        for i in range(per):
            out |= vals[i::per] << (bits * i)
        return _words(out)
    blocks = vals.reshape(n // 32, 32, m)
    w = torch.zeros(n // 32, 3, m, dtype=torch.int64)
    for j in range(32):  # 10 in word 0, one across words 0-1, 10 in word 1, one across 1-2, 10 in word 2
        x = blocks[:, j]
        if j < 10:
            w[:, 0] |= x << (3 * j)
        elif j == 10:
            w[:, 0] |= (x & 0x3) << 30
            w[:, 1] |= x >> 2
        elif j < 21:
            w[:, 1] |= x << (1 + 3 * (j - 11))
        elif j == 21:
            w[:, 1] |= (x & 0x1) << 31
            w[:, 2] |= x >> 1
        else:
            w[:, 2] |= x << (2 + 3 * (j - 22))
    return _words(w.reshape(n // 32 * 3, m))


def make_inputs(*, device, gen, groups=2, group_size=128, out_features=64, bits=4):
    """A GPTQ layer: `groups` groups of `group_size` input rows (in_features = groups * group_size),
    `out_features` outputs, fp16 scales per group and output. group_size and out_features are
    rounded up to multiples of 32: GPTQ packs weights and zeros 32 values to a block of words (a
    GPTQ group is 32, 64, 128, ... rows). bits in 2, 3, 4, 8 (the launcher's own assert)."""
    group_size = -(-group_size // 32) * 32
    in_features = groups * group_size
    out_features = -(-out_features // 32) * 32
    maxq = (1 << bits) - 1
    q = torch.randint(0, maxq + 1, (in_features, out_features), generator=gen)
    z = torch.randint(0, maxq + 1, (groups, out_features), generator=gen)
    scales = (torch.rand(groups, out_features, generator=gen) * 0.02 + 0.001).to(torch.float16)
    g_idx = (torch.arange(in_features) // group_size).to(torch.int32)
    qzeros = _pack(z.t(), bits).t().contiguous()  # zeros packed along the output dimension
    return {"qweight": _pack(q, bits).to(device), "scales": scales.to(device), "qzeros": qzeros.to(device),
            "g_idx": g_idx.to(device), "bits": torch.tensor(bits), "q": q.to(device), "z": z.to(device)}


def reference(qweight, scales, qzeros, g_idx, bits, q, z):
    g = g_idx.long()
    return (q - z[g]) * scales[g]


# group count and width of real layers at test scale; bits over 2..4, the contiguous part of the
# bits GPTQModel supports (tests/test_bits.py loops over SUPPORTS_BITS = [2, 3, 4, 8]; 5-7 the
# launcher rejects)
FUZZ = {"groups": (1, 4), "out_features": (32, 256), "bits": (2, 4)}
