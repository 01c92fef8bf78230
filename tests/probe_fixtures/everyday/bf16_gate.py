"""A bf16 gated product, ``out = x * y + bias`` where ``x > 0`` and ``-x`` elsewhere, all in
bf16 (the products, the sum, the comparison and the negation), and an fp8e4nv
quantize-dequantize of ``x``: what the plain interpreter computed on bf16's bit
patterns and rounded without the carry (harness/run/interp_numerics.py)."""

import torch
import triton
import triton.language as tl


@triton.jit
def bf16_gate_kernel(x_ptr, y_ptr, b_ptr, out_ptr, q_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    r = tl.where(x > 0, x * y + b, -x)
    tl.store(out_ptr + offs, r, mask=mask)
    tl.store(q_ptr + offs, x.to(tl.float32).to(tl.float8e4nv).to(tl.float32), mask=mask)


def launch(x, y, b):
    out, q = torch.empty_like(x), torch.empty(x.shape, dtype=torch.float32, device=x.device)
    bf16_gate_kernel[(triton.cdiv(x.numel(), 256),)](x, y, b, out, q, x.numel(), BLOCK=256)
    return out, q


def make_inputs(*, device, gen, n=600):
    return {k: (torch.randn(n, generator=gen) * 4).to(torch.bfloat16).to(device) for k in ("x", "y", "b")}


def reference(x, y, b):
    x, y, b = x.double(), y.double(), b.double()
    r = torch.where(x > 0, x * y + b, -x)
    return r, x.float().to(torch.float8_e4m3fn).double()
