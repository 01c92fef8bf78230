"""Attention's last step in bf16: each row's values weighted by the softmax of its scores, where
the weighted terms nearly cancel (the result is a few hundredths of its terms). The reference is
written in the inputs' own format, as a user writes one that runs at any dtype: torch.softmax and
the products in bf16, which round every weight and product to 8 bits. ``launch`` computes in
float32 and rounds only its result, as a correct kernel does, and is right: it is the reference
that is off (by up to a tenth of the result here), which the probe must not call the kernel's
error. ``launch_exp2`` takes exp2 of the scores where the softmax needs exp: wrong by far more."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_mix_kernel(s_ptr, v_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, EXP2: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    s = tl.load(s_ptr + row * n_cols + cols, mask=mask, other=float("-inf")).to(tl.float32)
    v = tl.load(v_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    s = s - tl.max(s, axis=0)
    e = tl.exp2(s) if EXP2 else tl.exp(s)
    tl.store(out_ptr + row, (tl.sum(e * v, axis=0) / tl.sum(e, axis=0)).to(tl.bfloat16))


def _launch(s, v, exp2):
    out = torch.empty(s.shape[0], device=s.device, dtype=torch.bfloat16)
    softmax_mix_kernel[(s.shape[0],)](s, v, out, s.shape[1], BLOCK=triton.next_power_of_2(s.shape[1]), EXP2=exp2)
    return out


def launch(s, v):
    return _launch(s, v, False)


def launch_exp2(s, v):
    return _launch(s, v, True)


def make_inputs(*, device, gen, rows=16, cols=8):
    """Scores randn, values randn * 3, the last value of each row chosen so that the weighted sum
    is 2 % of the sum of its terms' magnitudes (computed in float64, then rounded to bf16)."""
    s = torch.randn(rows, cols, generator=gen).to(torch.bfloat16)
    v = (torch.randn(rows, cols, generator=gen) * 3).double()
    p = torch.softmax(s.double(), dim=-1)
    head = (p[:, :-1] * v[:, :-1]).sum(-1)
    v[:, -1] = (0.02 * (p[:, :-1] * v[:, :-1]).abs().sum(-1) - head) / p[:, -1]
    return {"s": s.to(device), "v": v.to(torch.bfloat16).to(device)}


def reference(s, v):
    return (torch.softmax(s, dim=-1) * v).sum(dim=-1)
