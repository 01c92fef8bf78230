"""Glue for mamba-selective-state-update-softplus-overflow (a reproduction: repro.py beside
this file). ``dt_shift`` moves the raw dt logits up: real decoding steps have dt + dt_bias
of order -5..5, and a model (or a distilled one) whose dt projection saturates gives
values past 88.7, where float32 exp overflows.
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from repro import ssm_step_buggy, ssm_step_fixed  # noqa: E402

FUZZ = {"batch": (1, 8), "dim": (1, 300), "dstate": (1, 128), "dt_shift": (0, 120)}


def launch_buggy(state, x, dt, A, B, C, D, dt_bias):
    return ssm_step_buggy(state, x, dt, A, B, C, D, dt_bias)


def launch_fixed(state, x, dt, A, B, C, D, dt_bias):
    return ssm_step_fixed(state, x, dt, A, B, C, D, dt_bias)


def make_inputs(*, device, gen, batch=2, dim=96, dstate=16, dt_shift=0):
    def r(*shape):
        return torch.randn(*shape, generator=gen)

    state = r(batch, dim, dstate)
    x = r(batch, dim)
    dt = r(batch, dim) * 2.0 + float(dt_shift)
    dt_bias = r(dim) - 2.0
    A = -torch.rand(dim, dstate, generator=gen) * 4.0 - 0.5  # negative, as -exp(A_log)
    B = r(batch, dstate)
    C = r(batch, dstate)
    D = r(dim)
    t = dict(state=state, x=x, dt=dt, A=A, B=B, C=C, D=D, dt_bias=dt_bias)
    return {k: v.to(device) for k, v in t.items()}


def reference(state, x, dt, A, B, C, D, dt_bias):
    s = state.double()
    delta = torch.nn.functional.softplus((dt + dt_bias).double())  # exact: = t itself for large t
    s = s * torch.exp(A.double() * delta[:, :, None]) + delta[:, :, None] * B.double()[:, None, :] * x.double()[:, :, None]
    return (s * C.double()[:, None, :]).sum(-1) + D.double() * x.double()
