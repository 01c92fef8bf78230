"""Glue for fbgemm's Triton fp8 row-wise quantizer (fbgemm_gpu/experimental/gemm/triton_gemm/fp8_gemm.py).

triton_quantize_fp8_row(a) (the function quantize_fp8_row calls for a tensor on a GPU; on a CPU
tensor that one takes a torch path, so the glue calls the Triton one) returns the fp8 tensor and
the reciprocal row scales. The glue returns what upstream's test checks: the fp8 values times
their row's scale, which should give back `a` within fp8's precision. `transposed=1` passes the
input as the transposed view of a [k, m] tensor (the layout of the fix's new test).

The module imports triton.ops.matmul_perf_model (gone from Triton 3) for its GEMM autotuning,
which the quantizer does not use: stubbed.
"""

import torch

from harness.bugs.source import load

STUBS = {"triton.ops.matmul_perf_model": {"early_config_prune": lambda configs, *a, **k: configs,
                                          "estimate_matmul_time": lambda *a, **k: 0.0}}


def _run(variant, a):
    mod = load(__file__, variant, stubs=STUBS)
    a_fp8, a_scale = mod.triton_quantize_fp8_row(a)
    return a_fp8.to(torch.float32) * a_scale[:, None]


def launch_buggy(a):
    return _run("buggy", a)


def launch_fixed(a):
    return _run("fixed", a)


def make_inputs(*, device, gen, m=2, k=3, transposed=0):
    if transposed:
        a = torch.randn(k, m, generator=gen).to(device=device, dtype=torch.bfloat16).t()
    else:
        a = torch.randn(m, k, generator=gen).to(device=device, dtype=torch.bfloat16)
    return {"a": a}


def reference(a):
    return a


TOLERANCE = {"rtol": 1e-1, "atol": 2e-1}  # upstream's test: fp8 e4m3 keeps 3 mantissa bits
FUZZ = {"m": (1, 1024), "k": (1, 4096)}
