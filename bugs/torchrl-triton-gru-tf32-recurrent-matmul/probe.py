"""Glue for torchrl-triton-gru-tf32-recurrent-matmul (a reproduction: repro.py beside this
file). A single-layer GRU rollout of ``steps`` time steps over ``batch`` environments,
hidden size ``hidden`` (a power of two, >= 16, as the kernel's tl.dot needs), weights
initialised as torch.nn.GRU initialises them. The reference is the same recurrence in
float64.
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from repro import gru_forward  # noqa: E402

FUZZ = {"batch": (1, 40), "steps": (1, 200)}


def launch_buggy(x, h0, w_ih, b_ih, w_hh, b_hh):
    return gru_forward(x, h0, w_ih, b_ih, w_hh, b_hh, fixed=False)


def launch_fixed(x, h0, w_ih, b_ih, w_hh, b_hh):
    return gru_forward(x, h0, w_ih, b_ih, w_hh, b_hh, fixed=True)


def make_inputs(*, device, gen, batch=32, steps=64, inputs=24, hidden=64):
    k = hidden ** -0.5

    def u(*shape):
        return (torch.rand(*shape, generator=gen) * 2 - 1) * k

    t = dict(x=torch.randn(batch, steps, inputs, generator=gen), h0=torch.zeros(batch, hidden),
             w_ih=u(3 * hidden, inputs), b_ih=u(3 * hidden), w_hh=u(3 * hidden, hidden), b_hh=u(3 * hidden))
    return {n: v.to(device) for n, v in t.items()}


def reference(x, h0, w_ih, b_ih, w_hh, b_hh):
    x, h, w_ih, b_ih, w_hh, b_hh = (v.double() for v in (x, h0, w_ih, b_ih, w_hh, b_hh))
    H = h.shape[1]
    outs = []
    for t in range(x.shape[1]):
        gx = x[:, t] @ w_ih.T + b_ih
        gh = h @ w_hh.T + b_hh
        r = torch.sigmoid(gx[:, :H] + gh[:, :H])
        z = torch.sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
        n = torch.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
        h = n + z * (h - n)
        outs.append(h)
    return torch.stack(outs, dim=1)
