"""Glue for bitsandbytes' Triton backend 32-bit optimizer step with the Lion rule: the backend's own
ops.optimizer_update_32bit (bitsandbytes/backends/triton/ops.py), which launches
kernels_optim._optimizer_update_1state_32bit_triton_kernel and updates the parameter and the momentum
state in place, as bnb.optim.Lion's step does on a Triton device.

ops.py reads torch.accelerator's device type at import and enters
``<accelerator module>.device(tensor.device)`` around each launch. On a machine with no accelerator
(the interpreter's) the first is answered "cuda" for the import only, and the second is a no-op
context; on a GPU nothing is changed."""

import contextlib
import types

import torch

from harness.bugs.source import cuda_accelerator_at_import, load

# bnb.optim.Lion's defaults, as bitsandbytes' tests construct it
LR = 1e-4
BETA1, BETA2 = 0.9, 0.99


def ops(variant):
    with cuda_accelerator_at_import():
        mod = load(__file__, variant)
    if not torch.cuda.is_available():
        mod.torch_accelerator_module = types.SimpleNamespace(device=lambda d: contextlib.nullcontext())
    return mod


def _run(variant, p, g, state1, weight_decay):
    p, state1 = p.clone(), state1.clone()  # the step updates them in place
    ops(variant).optimizer_update_32bit(
        "lion", g, p, state1, None, None, 0.0, 0.0, BETA1, BETA2, 0.0, 0.0, 1e-8,
        float(weight_decay), 1, LR, 1.0)
    # one tensor: the parameters after the step, then the momentum state
    return torch.cat([p.flatten().float(), state1.flatten().float()])


def launch_buggy(p, g, state1, weight_decay):
    return _run("buggy", p, g, state1, weight_decay)


def launch_fixed(p, g, state1, weight_decay):
    return _run("fixed", p, g, state1, weight_decay)


def make_inputs(*, device, gen, rows=1024, cols=32, decay=0):
    """A float32 parameter (rows, cols) of randn * 0.1 and its gradient randn * 0.01, as
    test_optimizer32bit makes them, and a momentum state from earlier steps (randn * 0.01: the
    gradients' scale). The optimizer's weight decay is 0 (its default, as test_optimizer32bit
    constructs it); ``decay=1`` gives 0.1, the value of the fix's test_lion32bit_weight_decay."""
    weight_decay = 0.1 if decay else 0.0
    p = (torch.randn(rows, cols, generator=gen) * 0.1).to(device)
    g = (torch.randn(rows, cols, generator=gen) * 0.01).to(device)
    state1 = (torch.randn(rows, cols, generator=gen) * 0.01).to(device)
    return {"p": p, "g": g, "state1": state1, "weight_decay": weight_decay}


def reference(p, g, state1, weight_decay):
    """Lion's step with decoupled weight decay (the Lion paper, lion_pytorch, bitsandbytes' CUDA and
    default backends): p <- p * (1 - lr * wd) - lr * sign(beta1 * m + (1 - beta1) * g), then
    m <- beta2 * m + (1 - beta2) * g. The sign's argument is formed in float32 as the kernel forms it,
    so that a value within rounding of 0 takes the kernel's side."""
    m32 = state1.to(torch.float32)
    g32 = g.to(torch.float32)
    direction = torch.sign(m32 * BETA1 + (1.0 - BETA1) * g32).to(torch.float64)
    p64, g64, m64 = p.to(torch.float64), g.to(torch.float64), state1.to(torch.float64)
    new_p = p64 * (1.0 - LR * float(weight_decay)) - LR * direction
    new_m = m64 * BETA2 + (1.0 - BETA2) * g64
    return torch.cat([new_p.flatten(), new_m.flatten()])


FUZZ = {"rows": (1, 1024), "cols": (1, 4097)}
