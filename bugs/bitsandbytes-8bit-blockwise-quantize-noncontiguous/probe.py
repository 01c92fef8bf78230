"""Glue for bitsandbytes' Triton backend 8-bit blockwise quantization: the backend's own
ops.quantize_blockwise (bitsandbytes/backends/triton/ops.py), which launches
kernels_8bit_quant.quantize_8bit_blockwise_kernel.

ops.py reads torch.accelerator's device type at import and enters
``<accelerator module>.device(A.device)`` around each launch. On a machine with no
accelerator (the interpreter's) the first is answered "cuda" for the import only, and the
second is a no-op context; on a GPU nothing is changed."""

import contextlib
import types

import torch

from harness.bugs.source import cuda_accelerator_at_import, load


def ops(variant):
    with cuda_accelerator_at_import():
        mod = load(__file__, variant)
    if not torch.cuda.is_available():
        mod.torch_accelerator_module = types.SimpleNamespace(device=lambda d: contextlib.nullcontext())
    return mod


def _run(variant, A, code, blocksize):
    q, absmax = ops(variant).quantize_blockwise(A, code, blocksize)
    # one tensor: the codes (in A's logical order, A's shape), then each block's absmax
    return torch.cat([q.flatten().float(), absmax.float()])


def launch_buggy(A, code, blocksize):
    return _run("buggy", A, code, blocksize)


def launch_fixed(A, code, blocksize):
    return _run("fixed", A, code, blocksize)


BLOCKSIZE = 256  # a power of two, as bitsandbytes requires (not a size to fuzz)


def make_inputs(*, device, gen, rows=64, cols=128, transposed=0):
    """A (rows, cols) float32 tensor; with transposed=1 it is the transpose of a contiguous
    (cols, rows) tensor, as a weight's .t() is. The code is a sorted 256-level map of [-1, 1]
    (the linear one, as bitsandbytes' create_linear_map makes with signed=True)."""
    if transposed:
        A = torch.randn(cols, rows, generator=gen).to(device).t()
    else:
        A = torch.randn(rows, cols, generator=gen).to(device)
    code = torch.linspace(-1.0, 1.0, 256, dtype=torch.float32).to(device)
    return {"A": A, "code": code, "blocksize": BLOCKSIZE}


def reference(A, code, blocksize):
    """Blocks of `blocksize` elements in A's logical (row-major) order: absmax, and for each
    element the index of the nearest code level to x / absmax (the lower one on a tie),
    computed in float32 as the kernel does."""
    x = A.to(torch.float32).contiguous().flatten()
    c = code.to(torch.float32)
    n = x.numel()
    pad = (-n) % blocksize
    blocks = torch.nn.functional.pad(x, (0, pad)).view(-1, blocksize)
    absmax = blocks.abs().amax(dim=1)
    normed = (blocks / absmax[:, None]).clamp(-1.0, 1.0).flatten()[:n]
    q = (normed[:, None] - c[None, :]).abs().argmin(dim=1)  # first minimum: the lower level
    return torch.cat([q.to(torch.float64), absmax.to(torch.float64)])


FUZZ = {"rows": (1, 100), "cols": (1, 200)}
