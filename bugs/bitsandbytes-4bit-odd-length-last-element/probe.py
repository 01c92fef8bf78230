"""Glue for bitsandbytes' Triton backend 4-bit (NF4) quantization round trip: the backend's
own ops.quantize_4bit then ops.dequantize_4bit (bitsandbytes/backends/triton/ops.py).

ops.py reads torch.accelerator's device type at import and enters
``<accelerator module>.device(A.device)`` around each launch. On a machine with no
accelerator (the interpreter's) the first is answered "cuda" for the import only, and the
second is a no-op context; on a GPU nothing is changed."""

import contextlib
import types

import torch

from harness.bugs.source import cuda_accelerator_at_import, load

# NF4's 16 levels (the QLoRA data type, as bitsandbytes' get_4bit_type("nf4") lists them)
NF4 = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
       -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
       0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
       0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0]


def ops(variant):
    with cuda_accelerator_at_import():
        mod = load(__file__, variant)
    if not torch.cuda.is_available():
        mod.torch_accelerator_module = types.SimpleNamespace(device=lambda d: contextlib.nullcontext())
    return mod


def _run(variant, A, blocksize):
    mod = ops(variant)
    packed, absmax = mod.quantize_4bit(A, blocksize, "nf4", torch.uint8)
    return mod.dequantize_4bit(packed, absmax, blocksize, "nf4", A.shape, A.dtype)


def launch_buggy(A, blocksize):
    return _run("buggy", A, blocksize)


def launch_fixed(A, blocksize):
    return _run("fixed", A, blocksize)


BLOCKSIZE = 64  # a power of two, as bitsandbytes requires (not a size to fuzz)


def make_inputs(*, device, gen, n=4096):
    return {"A": torch.randn(n, generator=gen).to(device), "blocksize": BLOCKSIZE}


def reference(A, blocksize):
    """NF4 blockwise: per block of `blocksize` elements absmax, the nearest level to x / absmax
    (the kernel's thresholds are the midpoints), and back: level * absmax."""
    x = A.reshape(-1).to(torch.float64)
    n = x.numel()
    pad = (-n) % blocksize
    blocks = torch.nn.functional.pad(x, (0, pad)).view(-1, blocksize)
    absmax = blocks.abs().amax(dim=1, keepdim=True)
    levels = torch.tensor(NF4, dtype=torch.float64, device=x.device)
    mids = (levels[1:] + levels[:-1]) / 2
    q = torch.bucketize((blocks / absmax).clamp(-1.0, 1.0), mids)
    return (levels[q] * absmax).flatten()[:n].view(A.shape)


FUZZ = {"n": (1, 5000)}
