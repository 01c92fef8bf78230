"""Glue for gemlite.quant_utils.scale_activations_per_token_triton: dynamic per-token (per-row)
activation quantization to fp8 e4m3, as gemlite's A8W8 fp8 path runs it before the GEMM.

The project's launcher is called; the launcher returns the fp8 tensor and the per-row
scales, and the glue returns what the GEMM consumes: y * scale, in float32. The package's
triton_kernels/utils.py queries the GPU when imported; the three names quant_utils takes
from it are stood in for.
"""

import os

import torch

from harness.bugs.source import load

FP8 = torch.float8_e4m3fn
TOLERANCE = {"rtol": 0.0625, "atol": 1e-3}  # e4m3 keeps 3 mantissa bits: 2**-4 relative


def _interpreter_fp8_rounding():
    """Triton 3.7's interpreter rounds a float -> fp8 conversion by adding one to the truncated
    mantissa without carrying into the exponent (126.5 and 127 become 64, 31.5 becomes 16), so
    every value that rounds up across a power of two comes out halved. Under the interpreter
    only, fp32/fp16 -> fp8 e4m3 / e5m2 conversions are done by torch (round to nearest even,
    as the compiled kernel does)."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        return
    import numpy as np
    from triton.runtime import interpreter

    plain = interpreter._convert_float
    if getattr(plain, "_torch_fp8", False):
        return
    dst_types = {"fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2}

    def convert(input, input_dtype, output_dtype, rounding_mode):
        dst = dst_types.get(getattr(output_dtype, "name", ""))
        if dst is None or getattr(input_dtype, "name", "") not in ("fp32", "fp16"):
            return plain(input, input_dtype, output_dtype, rounding_mode)
        src = np.ascontiguousarray(input).astype(np.float32)
        return torch.from_numpy(src).to(dst).view(torch.uint8).numpy()

    convert._torch_fp8 = True
    interpreter._convert_float = convert


def _mod(variant):
    _interpreter_fp8_rounding()
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
