"""Glue for gemlite's GEMV_REVSPLITK kernel (gemv_revsplitK_A16fWnO16f_int32packing).

The project's own forward() is called; it zeroes the output and launches the autotuned
kernel, which tl.atomic_add's its two-slice partial sums into that output.
"""

import inspect

import torch

from harness.bugs.source import load

W_NBITS = 4
PER_SAMPLE = 32 // W_NBITS  # int32 packing: 8 four-bit values per word
FP16, W_GROUP_MODE = 1, 3   # DType.FP16; (q - zero) * scale per group

TOLERANCE = {"rtol": 2e-2, "atol": 2e-2}  # fp16 accumulation over K, against float64


def _mod(variant):
    return load(__file__, variant, stubs={"gemlite.core": {"GEMLITE_TRITON_CONFIG_CACHE": {}}})


def _run(mod, x, w_q, scales, zeros, group_size):
    fwd = mod.gemv_revsplitK_A16fWnO16f_int32packing_forward
    args = [x, w_q, scales, zeros, torch.ones(1, dtype=x.dtype, device=x.device),
            W_NBITS, group_size, 2 ** W_NBITS - 1, PER_SAMPLE,
            FP16, FP16, FP16, FP16,   # input, output, acc, meta dtypes
            0, W_GROUP_MODE, True]    # channel_scale_mode, W_group_mode, data_contiguous
    if "type_id" in inspect.signature(fwd).parameters:  # 0.4.8 added it to the autotune key
        args.append(FP16 * 100 + W_NBITS)
    return fwd(*args)


def launch_buggy(x, w_q, scales, zeros, group_size):
    return _run(_mod("buggy"), x, w_q, scales, zeros, group_size)


def launch_fixed(x, w_q, scales, zeros, group_size):
    return _run(_mod("fixed"), x, w_q, scales, zeros, group_size)


def _pack(q):
    """(K, N) values in [0, 16) -> (K // 8, N) int32, value k at bits 4 * (k % 8) of word k // 8."""
    k, n = q.shape
    q = q.to(torch.int64).view(k // PER_SAMPLE, PER_SAMPLE, n)
    shifts = (torch.arange(PER_SAMPLE, dtype=torch.int64) * W_NBITS).view(1, -1, 1)
    words = (q << shifts).sum(dim=1)
    words = torch.where(words >= 2 ** 31, words - 2 ** 32, words)
    return words.to(torch.int32)


def _unpack(w_q, k):
    w = w_q.to(torch.int64) & 0xFFFFFFFF
    shifts = (torch.arange(PER_SAMPLE, dtype=torch.int64) * W_NBITS).view(1, -1, 1)
    q = (w.unsqueeze(1) >> shifts) & (2 ** W_NBITS - 1)
    return q.reshape(k, -1)


# gemlite's contract (GemLiteLinearTriton.__init__ in gemlite/core.py of 0.4.7 and 0.4.8):
# "in_features should be divisible by 32 or the group_size" (MIN_SIZE = 32) and "Only group_size >=
# 32 is supported". Other sizes are outside it (the kernel's config pruner keeps no config for a
# group of 1): refused here, so shape fuzzing does not try them.
MIN_SIZE, MIN_GROUP = 32, 32


def make_inputs(*, device, gen, n=512, k=256, group_size=64):
    if k % MIN_SIZE or group_size < MIN_GROUP or k % group_size:
        raise ValueError(f"k={k}, group_size={group_size}: outside gemlite's contract (gemlite/core.py)")
    q = torch.randint(0, 2 ** W_NBITS, (k, n), generator=gen)
    scales = (torch.rand(k // group_size, n, generator=gen) * 0.02 + 0.005).to(torch.float16)
    zeros = (torch.rand(k // group_size, n, generator=gen) * 2 + 7).to(torch.float16)
    x = torch.randn(1, k, generator=gen).to(torch.float16)
    return {"x": x.to(device), "w_q": _pack(q).to(device), "scales": scales.to(device),
            "zeros": zeros.to(device), "group_size": group_size}


def reference(x, w_q, scales, zeros, group_size):
    k = x.shape[1]
    q = _unpack(w_q.cpu(), k).double()
    g = torch.arange(k) // group_size
    w = (q - zeros.cpu().double()[g]) * scales.cpu().double()[g]
    return x.cpu().double() @ w
