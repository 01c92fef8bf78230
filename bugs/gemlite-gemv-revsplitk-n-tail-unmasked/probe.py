"""Glue for gemlite's M=1 reverse split-K GEMV (triton_kernels/gemv_revsplitK_kernels.py) on
4-bit weights packed in int32, with an output size N that need not be a multiple of the block.
The weights are symmetric 4-bit with one scale per output channel: W = (q - 8) * scale[n]
(W_group_mode 1 with a scalar zero, channel_scale_mode 1, group_size = K).

The project's gemv_revsplitK_forward is called (it zeroes the output and launches the
autotuned kernel, gemlite's "fast" autotune configs). On a machine without a GPU (the
interpreter) the GPU queries triton_kernels/utils.py makes when it is imported are answered for it.
"""

import contextlib
import os
import types

import torch

from harness.bugs.source import load

W_NBITS = 4
PER_SAMPLE = 32 // W_NBITS
FP16, FP32 = 1, 0  # gemlite DType values
W_GROUP_MODE, CHANNEL_SCALE_MODE = 1, 1  # q - zero in the loop; the weight scales after it

TOLERANCE = {"rtol": 2e-2, "atol": 2e-2}  # fp16 output against float64


@contextlib.contextmanager
def _gpu_queries_answered():
    if os.environ.get("TRITON_INTERPRET") != "1" or torch.cuda.is_available():
        yield
        return
    from triton.runtime import driver

    keep = driver._active, torch.cuda.get_device_properties, torch.cuda.get_device_capability
    driver._active = types.SimpleNamespace(
        get_current_target=lambda: types.SimpleNamespace(backend="cuda", arch=90, warp_size=32),
        utils=types.SimpleNamespace(get_device_properties=lambda d: {"max_shared_mem": 232448}))
    torch.cuda.get_device_properties = lambda device=None: types.SimpleNamespace(
        name="interpreter", multi_processor_count=132)
    torch.cuda.get_device_capability = lambda device=None: (9, 0)
    try:
        yield
    finally:
        driver._active, torch.cuda.get_device_properties, torch.cuda.get_device_capability = keep


def _mod(variant):
    with _gpu_queries_answered():
        return load(__file__, variant, stubs={"gemlite.core": {"GEMLITE_TRITON_CONFIG_CACHE": {}}})


def _run(mod, x, w_q, scales, zeros):
    return mod.gemv_revsplitK_forward(
        x, w_q, scales, zeros, None,
        W_NBITS, x.shape[1], 2 ** W_NBITS - 1, PER_SAMPLE,   # group_size = K: per channel
        FP16, FP16, FP32, FP16,                              # input, output, acc, meta dtypes
        CHANNEL_SCALE_MODE, W_GROUP_MODE, True,              # data_contiguous
        FP16 * 100 + W_NBITS)                                # type_id


def launch_buggy(x, w_q, scales, zeros):
    return _run(_mod("buggy"), x, w_q, scales, zeros)


def launch_fixed(x, w_q, scales, zeros):
    return _run(_mod("fixed"), x, w_q, scales, zeros)


def _pack(q):
    """(K, N) values in [0, 16) -> (K // 8, N) int32, value k at bits 4 * (k % 8) of word k // 8."""
    k, n = q.shape
    q = q.to(torch.int64).view(k // PER_SAMPLE, PER_SAMPLE, n)
    shifts = (torch.arange(PER_SAMPLE, dtype=torch.int64) * W_NBITS).view(1, -1, 1)
    words = (q << shifts).sum(dim=1)
    return torch.where(words >= 2 ** 31, words - 2 ** 32, words).to(torch.int32)


def _unpack(w_q, k):
    w = w_q.to(torch.int64) & 0xFFFFFFFF
    shifts = (torch.arange(PER_SAMPLE, dtype=torch.int64) * W_NBITS).view(1, -1, 1)
    return ((w.unsqueeze(1) >> shifts) & (2 ** W_NBITS - 1)).reshape(k, -1)


# gemlite's contract: "in_features should be divisible by 32 or the group_size" (GemLiteLinearTriton
# in gemlite/core.py, MIN_SIZE = 32, in 0.5.1.post1 and 0.6.0); out_features has none (the bug).
# Other K are outside it: refused here, so shape fuzzing does not try them.
K_MULTIPLE = 32


def make_inputs(*, device, gen, n=256, k=256):
    if k % K_MULTIPLE:
        raise ValueError(f"k={k}: gemlite needs in_features divisible by {K_MULTIPLE} (gemlite/core.py)")
    q = torch.randint(0, 2 ** W_NBITS, (k, n), generator=gen)
    scales = (torch.rand(1, n, generator=gen) * 0.02 + 0.005).to(torch.float16)
    zeros = torch.full((1,), 2.0 ** (W_NBITS - 1), dtype=torch.float16)
    x = torch.randn(1, k, generator=gen).to(torch.float16)
    return {"x": x.to(device), "w_q": _pack(q).to(device), "scales": scales.to(device), "zeros": zeros.to(device)}


def reference(x, w_q, scales, zeros):
    k = x.shape[1]
    q = _unpack(w_q.cpu(), k).double()
    w = (q - zeros.cpu().double()) * scales.cpu().double()
    return x.cpu().double() @ w
