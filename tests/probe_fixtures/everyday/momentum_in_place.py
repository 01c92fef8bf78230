"""One step of SGD with momentum, in place on two inputs: v = mu * v + g, then p -= lr * v.
The launcher returns None; the reference returns a dict {input name: expected value}."""

import torch
import triton
import triton.language as tl


@triton.jit
def momentum_kernel(p_ptr, v_ptr, g_ptr, lr, mu, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = mu * tl.load(v_ptr + offs, mask=mask) + tl.load(g_ptr + offs, mask=mask)
    tl.store(v_ptr + offs, v, mask=mask)
    tl.store(p_ptr + offs, tl.load(p_ptr + offs, mask=mask) - lr * v, mask=mask)


def launch(p, v, g, lr, mu):
    momentum_kernel[(triton.cdiv(p.numel(), 256),)](p, v, g, lr, mu, p.numel(), BLOCK=256)


def make_inputs(*, device, gen, n=700):
    return {"p": torch.randn(n, generator=gen).to(device), "v": torch.randn(n, generator=gen).to(device),
            "g": torch.randn(n, generator=gen).to(device), "lr": 0.1, "mu": 0.9}


def reference(p, v, g, lr, mu):
    v = mu * v.double() + g.double()
    return {"p": p.double() - lr * v, "v": v}
