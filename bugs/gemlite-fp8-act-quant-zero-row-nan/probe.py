"""Glue for gemlite.quant_utils.scale_activations_per_token_triton: dynamic per-token (per-row)
activation quantization to fp8 e4m3, as gemlite's A8W8 fp8 path runs it before the GEMM.

The project's launcher is called; the launcher returns the fp8 tensor and the per-row
scales, and the glue returns what the GEMM consumes: y * scale, in float32. The package's
triton_kernels/utils.py queries the GPU when imported; the three names quant_utils takes
from it are stood in for.
"""


import torch

from harness.bugs.source import interpreter_fixes, load

FP8 = torch.float8_e4m3fn
TOLERANCE = {"rtol": 0.0625, "atol": 1e-3}  # e4m3 keeps 3 mantissa bits: 2**-4 relative




def _mod(variant):
    interpreter_fixes("fp8-rounding")  # what compiled Triton does: harness/run/triton_compat.py
    return load(__file__, variant, stubs={"gemlite.triton_kernels.utils": {
        "IS_HIP": False, "get_num_SMs": lambda device=None: 132,
        "next_power_of_2": lambda v: 1 << max(0, int(v) - 1).bit_length()}})


def _run(mod, x):
    y, scales = mod.scale_activations_per_token_triton(x, w_dtype=FP8, fp32_scale=True)
    return y.to(torch.float32) * scales


def launch_buggy(x):
    return _run(_mod("buggy"), x)


def launch_fixed(x):
    return _run(_mod("fixed"), x)


def make_inputs(*, device, gen, tokens=16, hidden=256, zero_rows=0):
    """tokens x hidden fp16 activations; the last zero_rows rows are zero (padding tokens)."""
    x = torch.randn(tokens, hidden, generator=gen).to(torch.float16)
    if zero_rows:
        x[tokens - zero_rows:] = 0
    return {"x": x.to(device)}


def reference(x):
    return x.double()  # dequantize(quantize(x)) is x up to the fp8 rounding (TOLERANCE)
