"""A per-token-group fp8 quantizer, our own, written as a user of an fp8 MoE or linear layer would: one program per
(token, group of GROUP columns); the group's absmax (floored by eps) over 448 is its scale, the values divided by
it are clamped to e4m3's range and stored as float8_e4m3fn, the scale per group stored beside them (row-major, or
column-major as a GEMM that reads scales per column wants them, repeated back here). The launcher returns the
dequantized result, q.float() * scale repeated over each group, so that a float64 reference that does not quantize
(the value itself) is the thing compared, with a TOLERANCE of e4m3's half step (3 mantissa bits: 2**-4 relative).

- ``silu_mul_quant``: silu(x[:, :H]) * x[:, H:] quantized per group (a fused activation before an fp8 GEMM);
- ``quant``: x itself quantized per group;
- ``*_colmajor``: the same, the scales stored column-major;
- ``*_leaky`` (broken twins): the lanes of a block past its group (BLOCK is twice GROUP) read token 0's group g
  (of ``up`` with silu; a wrong index, masked off in the store) and add their sum times 0 to the scale: 0 for a finite
  token 0, NaN in group g of every token once token 0's group g holds a non-finite value, elements that do not
  depend on it (a masked-off lane times 0 reaching the result).

Correct quantizers all: given +inf in one element, a group's absmax is inf, its scale inf, every other element
of the group y / inf = 0 and 0 * inf = NaN dequantized, where the unquantized reference is finite (IEEE arithmetic
of any absmax quantizer)."""

import torch
import triton
import triton.language as tl

FP8_MAX = 448.0


@triton.jit
def group_quant_kernel(x_ptr, q_ptr, s_ptr, H, n_groups, x_stride, s_stride_t, s_stride_g, eps,
                       SILU: tl.constexpr, LEAK: tl.constexpr, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    t = pid // n_groups
    g = pid % n_groups
    cols = g * GROUP + tl.arange(0, BLOCK)
    mask = (tl.arange(0, BLOCK) < GROUP) & (cols < H)
    if SILU:
        a = tl.load(x_ptr + t * x_stride + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(x_ptr + t * x_stride + H + cols, mask=mask, other=0.0).to(tl.float32)
        y = a * tl.sigmoid(a) * b
    else:
        y = tl.load(x_ptr + t * x_stride + cols, mask=mask, other=0.0).to(tl.float32)
    absmax = tl.maximum(tl.max(tl.abs(y), axis=0), eps)
    scale = absmax / 448.0
    if LEAK:  # BUG: the lanes past the group read token 0's group g (a wrong index) and add it times 0
        pad = tl.load(x_ptr + (H if SILU else 0) + cols - GROUP, mask=~mask, other=0.0).to(tl.float32)
        scale = scale + 0.0 * tl.sum(pad, axis=0)
    q = tl.clamp(y / scale, -448.0, 448.0)
    tl.store(q_ptr + t * H + cols, q.to(q_ptr.dtype.element_ty), mask=mask)
    tl.store(s_ptr + t * s_stride_t + g * s_stride_g, scale)


def _quant(y_cols, x, silu, colmajor=False, leak=False, group=128):
    """The dequantized result, tokens x y_cols float32: q.float() * the scale of its group."""
    tokens = x.shape[0]
    n_groups = triton.cdiv(y_cols, group)
    q = torch.empty(tokens, y_cols, device=x.device, dtype=torch.float8_e4m3fn)
    s = (torch.empty(n_groups, tokens, device=x.device).t() if colmajor
         else torch.empty(tokens, n_groups, device=x.device))
    block = triton.next_power_of_2(group) * (2 if leak else 1)
    group_quant_kernel[(tokens * n_groups,)](x, q, s, y_cols, n_groups, x.stride(0), s.stride(0), s.stride(1), 1e-10,
                                             SILU=silu, LEAK=leak, GROUP=group, BLOCK=block)
    return q.float() * s.repeat_interleave(group, dim=1)[:, :y_cols]


def silu_mul_quant(x):
    return _quant(x.shape[1] // 2, x, True)


def silu_mul_quant_colmajor(x):
    return _quant(x.shape[1] // 2, x, True, colmajor=True)


def quant(x):
    return _quant(x.shape[1], x, False)


def quant_colmajor(x):
    return _quant(x.shape[1], x, False, colmajor=True)


def quant_leaky(x):
    return _quant(x.shape[1], x, False, leak=True)


def silu_mul_quant_flat(x):  # the dequantized result as one vector, as a caller that flattens tokens sees it
    return _quant(x.shape[1] // 2, x, True).reshape(-1)


def silu_mul_quant_flat_leaky(x):
    return _quant(x.shape[1] // 2, x, True, leak=True).reshape(-1)


# e4m3 keeps 3 mantissa bits: a value is within half a step, 2**-4 of itself; a group's smallest values fall to
# e4m3's subnormals (a step of 2**-9 times the scale), far below atol
TOLERANCE = {"rtol": 0.07, "atol": 1e-3}


def make_inputs(*, device, gen, tokens=8, hidden=512):
    return {"x": torch.randn(tokens, hidden, generator=gen).to(device)}


def reference(x):
    x = x.double()
    return x
