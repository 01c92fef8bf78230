"""A gated activation over a batch of experts' token buffers (a mixture-of-experts' silu(gate) * up on an
(experts, tokens, 2 * hidden) tensor), one program per (expert, token). The input offset ``e * stride_e + t *
stride_t`` is int32 (program ids times runtime strides), so it wraps once the input passes 2**31 elements (launch);
the twin widens the program ids first (launch_fixed). Both are right at every size the interpreter can run."""

import torch
import triton
import triton.language as tl


@triton.jit
def expert_gate_kernel(x_ptr, out_ptr, hidden, stride_xe, stride_xt, stride_oe, stride_ot, BLOCK: tl.constexpr):
    e = tl.program_id(0)
    t = tl.program_id(1)
    for c0 in range(0, hidden, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < hidden
        base = x_ptr + e * stride_xe + t * stride_xt
        gate = tl.load(base + cols, mask=mask, other=0.0).to(tl.float32)
        up = tl.load(base + hidden + cols, mask=mask, other=0.0).to(tl.float32)
        y = gate * tl.sigmoid(gate) * up
        tl.store(out_ptr + e * stride_oe + t * stride_ot + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def expert_gate_kernel_64(x_ptr, out_ptr, hidden, stride_xe, stride_xt, stride_oe, stride_ot, BLOCK: tl.constexpr):
    e = tl.program_id(0).to(tl.int64)
    t = tl.program_id(1).to(tl.int64)
    for c0 in range(0, hidden, BLOCK):
        cols = c0 + tl.arange(0, BLOCK)
        mask = cols < hidden
        base = x_ptr + e * stride_xe + t * stride_xt
        gate = tl.load(base + cols, mask=mask, other=0.0).to(tl.float32)
        up = tl.load(base + hidden + cols, mask=mask, other=0.0).to(tl.float32)
        y = gate * tl.sigmoid(gate) * up
        tl.store(out_ptr + e * stride_oe + t * stride_ot + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def _run(kernel, x):
    experts, tokens, two_h = x.shape
    out = torch.empty(experts, tokens, two_h // 2, dtype=x.dtype, device=x.device)
    kernel[(experts, tokens)](x, out, two_h // 2, x.stride(0), x.stride(1), out.stride(0), out.stride(1),
                              BLOCK=1024)
    return out


def launch(x):
    return _run(expert_gate_kernel, x)


def launch_fixed(x):
    return _run(expert_gate_kernel_64, x)


def make_inputs(*, device, gen, experts=4, tokens=64, hidden=512):
    x = torch.randn(experts, tokens, 2 * hidden, generator=gen).to(torch.bfloat16)
    return {"x": x.to(device)}


def reference(x):
    h = x.shape[-1] // 2
    gate, up = x[..., :h].double(), x[..., h:].double()
    return torch.nn.functional.silu(gate) * up
