"""Glue for lion-pytorch's Triton update, lion_pytorch/triton.py: update_fn(p, grad, exp_avg, lr, wd,
beta1, beta2), which Lion(..., use_triton=True).step() calls for each parameter, launching the
autotuned update_fn_kernel that updates the parameter and its momentum (exp_avg) in place.

update_fn asserts that its tensors are on a CUDA device; under the interpreter (tensors on the CPU)
the glue makes the launch update_fn makes, the same grid and arguments, and on a GPU it calls
update_fn itself."""

import torch

from harness.bugs.source import load

# Lion's defaults and the README's example: Lion(model.parameters(), lr=1e-4, weight_decay=1e-2, use_triton=True)
LR, WD = 1e-4, 1e-2
BETA1, BETA2 = 0.9, 0.99


def _run(variant, p, grad, exp_avg):
    mod = load(__file__, variant)
    p, exp_avg = p.clone(), exp_avg.clone()  # the update is in place
    if p.is_cuda:
        mod.update_fn(p, grad, exp_avg, LR, WD, BETA1, BETA2)
    else:
        import triton

        n_elements = p.numel()
        grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731 (update_fn's grid)
        mod.update_fn_kernel[grid](p, grad, exp_avg, LR, WD, BETA1, BETA2, n_elements)
    # one tensor: the parameter after the step, then the momentum
    return torch.cat([p.flatten(), exp_avg.flatten()])


def launch_buggy(p, grad, exp_avg):
    return _run("buggy", p, grad, exp_avg)


def launch_fixed(p, grad, exp_avg):
    return _run("fixed", p, grad, exp_avg)


def make_inputs(*, device, gen, rows=1, cols=10):
    """The README's toy model, nn.Linear(10, 1): its float32 weight (rows, cols) initialised as
    nn.Linear does (uniform in +-1/sqrt(cols)), a gradient (randn), and the momentum Lion starts
    from (zeros: the first step)."""
    bound = 1.0 / max(cols, 1) ** 0.5
    p = (torch.rand(rows, cols, generator=gen) * 2 - 1) * bound
    grad = torch.randn(rows, cols, generator=gen)
    exp_avg = torch.zeros(rows, cols)
    return {"p": p.to(device), "grad": grad.to(device), "exp_avg": exp_avg.to(device)}


def reference(p, grad, exp_avg):
    """One Lion step (lion_pytorch.lion_pytorch.update_fn, the package's own torch version):
    p <- p * (1 - lr * wd) - lr * sign(beta1 * m + (1 - beta1) * g); m <- beta2 * m + (1 - beta2) * g."""
    p, grad, exp_avg = p.double(), grad.double(), exp_avg.double()
    p = p * (1 - LR * WD)
    update = exp_avg * BETA1 + grad * (1 - BETA1)
    p = p - LR * torch.sign(update)
    exp_avg = exp_avg * BETA2 + grad * (1 - BETA2)
    return torch.cat([p.flatten(), exp_avg.flatten()])


FUZZ = {"rows": (1, 4096), "cols": (1, 4096)}
