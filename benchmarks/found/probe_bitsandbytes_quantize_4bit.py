"""A probe file for bitsandbytes 0.50.2's Triton backend ``quantize_4bit`` (bitsandbytes/backends/triton/ops.py, the
function bitsandbytes registers for Intel XPU devices), called as released (never copied): an NF4 round trip,
quantize then dequantize, against a torch reference made from bitsandbytes' own NF4 code table
(``bitsandbytes.functional.get_4bit_type``): blocks of 64 elements in the logical (row-major) order, each value
divided by its block's absolute maximum and put on the nearest level. The probe's ``layout`` detector lays ``A``
out as a transposed view and as a slice of a wider buffer.

    pip install --no-deps --target /tmp/bnb bitsandbytes==0.50.2
    BNB_SITE=/tmp/bnb python -m harness probe benchmarks/found/probe_bitsandbytes_quantize_4bit.py \
        --backend interpreter --detectors reference,layout
"""

import contextlib
import os
import sys
import types

import torch

sys.path.insert(0, os.environ.get("BNB_SITE", "/tmp/bnb"))

from harness.bugs.source import cuda_accelerator_at_import  # noqa: E402

with cuda_accelerator_at_import():  # ops.py asks torch.accelerator for a device type at import
    from bitsandbytes.backends.triton import ops  # noqa: E402
    from bitsandbytes.functional import get_4bit_type  # noqa: E402

if not torch.cuda.is_available():  # the launcher enters <accelerator>.device(A.device): a no-op on the CPU
    ops.torch_accelerator_module = types.SimpleNamespace(device=lambda _d: contextlib.nullcontext())

BLOCK = 64


def launch(A):
    packed, absmax = ops.quantize_4bit(A, BLOCK, "nf4", torch.uint8)
    return ops.dequantize_4bit(packed, absmax, BLOCK, "nf4", A.shape, torch.float32)


def make_inputs(*, device, gen, rows=64, cols=128):
    return {"A": torch.randn(rows, cols, generator=gen).to(device)}


def reference(A):
    code = get_4bit_type("nf4", device="cpu").to(torch.float32)
    mids = (code[1:] + code[:-1]) / 2
    flat = A.detach().to("cpu", torch.float32).contiguous().reshape(-1)
    x = torch.nn.functional.pad(flat, (0, -flat.numel() % BLOCK)).reshape(-1, BLOCK)  # the last block padded with 0
    absmax = x.abs().amax(dim=1, keepdim=True)
    level = torch.bucketize((x / absmax).clamp(-1, 1), mids)
    return (code[level] * absmax).reshape(-1)[: flat.numel()].reshape(A.shape).to(torch.float64)
