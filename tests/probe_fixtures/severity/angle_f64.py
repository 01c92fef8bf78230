"""A rotation angle computed in float64, as a kernel asked for float64 angles does: ``launch``
converts the position and the frequency to float64 before multiplying (correct), ``launch_f32``
multiplies them in float32 and converts the product (the bug of xformers' rope_padded with
internal_dtype="f64": an fp32 rounding inside a float64 computation). At positions near 2e5 the
fp32 product is off by up to 2e5 * 2**-24 ~ 1e-2 rad, far past the fp32 output's tolerance; an
error floor in float32's unit would excuse that as what any fp32 kernel does, but this kernel
computes in float64 (``.to(tl.float64)``), where a correct one is off by one fp32 output rounding."""

import torch
import triton
import triton.language as tl


@triton.jit
def angle_kernel(pos_ptr, freq_ptr, out_ptr, n, WIDE_PRODUCT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    pos = tl.load(pos_ptr + offs, mask=mask, other=0.0)
    freq = tl.load(freq_ptr + offs, mask=mask, other=0.0)
    if WIDE_PRODUCT:
        ang = pos.to(tl.float64) * freq.to(tl.float64)
    else:
        ang = (pos * freq).to(tl.float64)
    tl.store(out_ptr + offs, tl.cos(ang).to(tl.float32), mask=mask)


def _launch(pos, freq, wide):
    out = torch.empty_like(pos)
    n = pos.numel()
    angle_kernel[(triton.cdiv(n, 64),)](pos, freq, out, n, WIDE_PRODUCT=wide, BLOCK=64)
    return out


def launch(pos, freq):
    return _launch(pos, freq, True)


def launch_f32(pos, freq):
    return _launch(pos, freq, False)


def make_inputs(*, device, gen, n=64, pos0=200_000):
    pos = torch.arange(pos0, pos0 + n, dtype=torch.float32)
    freq = 10000.0 ** (-torch.rand(n, generator=gen))  # theta ** (-2i / d), in (1e-4, 1]
    return {"pos": pos.to(device), "freq": freq.to(torch.float32).to(device)}


def reference(pos, freq):
    return torch.cos(pos.double() * freq.double())
