"""Glue for gemlite's GEMM launcher (gemlite.triton_kernels.gemm_kernels.gemm_forward) on int8
weights with one scale per output channel, applied after the matmul (W_group_mode 0,
channel_scale_mode 1: the "post-scale" A16W8 layout), fp16 activations, no activation scales.

The project's gemm_forward is called. Stand-ins: gemlite's autotune setting is "default" (its
single config, as gemlite.set_autotune("default") gives; no benchmarking), and its config cache
is empty. On a machine without a GPU (the interpreter) the GPU queries that
triton_kernels/utils.py makes when it is imported are answered for it.
"""

import contextlib
import os
import types

import torch

from harness.bugs.source import interpreter_fixes, load

FP32, FP16 = 0, 1  # gemlite DType values
W_NBITS = 8


class _Autotune:  # gemlite.triton_kernels.config.AUTOTUNE, set to "default"
    GEMV = GEMV_REVSPLITK = GEMV_SPLITK = GEMM_SPLITK = GEMM = "default"
    USE_CUDA_GRAPH = False


@contextlib.contextmanager
def _gpu_queries_answered():
    if os.environ.get("TRITON_INTERPRET") != "1" or torch.cuda.is_available():
        yield
        return
    from triton.runtime import driver

    keep_active, keep_props = driver._active, torch.cuda.get_device_properties
    driver._active = types.SimpleNamespace(
        get_current_target=lambda: types.SimpleNamespace(backend="cuda", arch=90, warp_size=32))
    torch.cuda.get_device_properties = lambda device=None: types.SimpleNamespace(
        name="interpreter", multi_processor_count=132)
    try:
        yield
    finally:
        driver._active, torch.cuda.get_device_properties = keep_active, keep_props




def _mod(variant):
    interpreter_fixes("bool-args")  # what compiled Triton does: harness/run/triton_compat.py
    with _gpu_queries_answered():
        return load(__file__, variant, stubs={
            "gemlite.triton_kernels.config": {"AUTOTUNE": _Autotune},
            "gemlite.core": {"GEMLITE_TRITON_CONFIG_CACHE": {}}})


def _run(mod, x, w_q, scales):
    k = w_q.shape[0]
    zeros = torch.zeros(1, dtype=x.dtype, device=x.device)  # unused in this mode
    return mod.gemm_forward(x, w_q, scales, zeros, None,
                            W_NBITS, k, 2 ** W_NBITS - 1, 1,  # nbits, group_size (= K), mask, per sample
                            FP16, FP16, FP32, FP16,           # input, output, acc, meta dtypes
                            1, 0, True,                       # channel_scale_mode, W_group_mode, contiguous
                            FP16 * 100 + W_NBITS)             # type_id


def launch_buggy(x, w_q, scales):
    return _run(_mod("buggy"), x, w_q, scales)


def launch_fixed(x, w_q, scales):
    return _run(_mod("fixed"), x, w_q, scales)


# gemlite's contract: "in_features should be divisible by 32 or the group_size"
# (GemLiteLinearTriton.__init__ in gemlite/core.py, MIN_SIZE = 32, in 0.5.1 and 0.5.1.post1):
# gemm_INT_kernel loads W_q with no mask along K. Other K are outside it: refused here, so shape
# fuzzing does not try them.
K_MULTIPLE = 32


def make_inputs(*, device, gen, m=16, n=128, k=128):
    """x (m, k) fp16; w_q (k, n) int8; scales (1, n) fp16: W = w_q * scales per output channel."""
    if k % K_MULTIPLE:
        raise ValueError(f"k={k}: gemlite needs in_features divisible by {K_MULTIPLE} (gemlite/core.py)")
    x = torch.randn(m, k, generator=gen).to(torch.float16)
    w_q = torch.randint(-127, 128, (k, n), generator=gen, dtype=torch.int8)
    scales = (torch.rand(1, n, generator=gen) * 0.01 + 0.002).to(torch.float16)
    return {"x": x.to(device), "w_q": w_q.to(device), "scales": scales.to(device)}


def reference(x, w_q, scales):
    return x.double() @ (w_q.double() * scales.double())
