"""Glue for cherimoya's fused 3-tap dilated depthwise convolution + per-example layer norm, the
autograd Function FusedDilatedConvNormFunc that each CheriBlock applies to its (N, L, C) input with
a (3, C) weight and the block's dilation. 0.0.1 has it in cherimoya/cherimoya.py (forward kernel
fwd_conv_kernel, backward kernel bwd_conv_kernel, one program per example); 0.1.0 moved it to
cherimoya/cheri.py (forward and backward split over (example, BLOCK_L tile) programs, dx gathered
by _bwd_dx_kernel). For each version the glue runs that version's own Function, forward then
backward with torch.autograd.grad and the given upstream gradient dy, and returns (dx, dw).

0.1.0's public dispatcher fused_dilated_conv_norm sends CPU tensors to a pure-PyTorch fallback,
so it would never reach a Triton kernel under the interpreter; the glue applies the Triton-backed
Function itself, as the dispatcher does for CUDA tensors. 0.0.1's cherimoya.py imports the training
loop's dependencies at the top (h5py, tqdm, tangermeme, bpnet-lite, the package's losses and
performance modules); the Function and its kernels use none of them, and they are stubbed.

Every kernel of both versions is @triton.autotune'd with key (C, L), and in both the first call at
a new key returns wrong gradients for a reason of its own, not this entry's bug: 0.0.1's backward
adds into a torch.zeros dx with no reset_to_zero, so autotune's benchmarking launches add into it
too; 0.1.0's _bwd_apply_kernel overwrites the buffer it reads with no restore_value, so each
benchmarking launch reads the previous one's output (0.2.0's docstring asks users to warm up before
reading gradients; 0.3.0 added restore_value). The glue therefore calls the Function once at the
shape and returns the second call, for both versions.
"""

import torch

from harness.bugs.source import load

STUBS_0_0_1 = {
    "h5py": {},
    "tqdm": {"tqdm": lambda it=None, *a, **k: it},
    "tangermeme.predict": {"predict": None},
    "bpnetlite.logging": {"Logger": object},
    "cherimoya.losses": {"MNLLLoss": None, "log1pMSELoss": None, "_mixture_loss": None},
    "cherimoya.performance": {"pearson_corr": None, "calculate_performance_measures": None},
}

EPS = 1e-3  # the layer norm's eps in both versions (0.1.0: CONV_NORM_EPS)


def _grads(fn, x, w, dy, dilation):
    x = x.detach().requires_grad_()
    w = w.detach().requires_grad_()
    y = fn.apply(x, w, dilation)
    return torch.autograd.grad(y, (x, w), dy)


def _run(variant, x, w, dy, dilation):
    mod = load(__file__, variant, stubs=STUBS_0_0_1 if variant == "buggy" else None)
    fn = mod.FusedDilatedConvNormFunc
    # A first call at a new (C, L) tunes the autotuned kernels, and its benchmarking launches change
    # that call's gradients in both versions (see the module docstring): warmed up first, as 0.2.0's
    # docstring asks of a user who reads gradients from one call; the second call is returned.
    _grads(fn, x.clone(), w.clone(), dy.clone(), dilation)
    dx, dw = _grads(fn, x, w, dy, dilation)
    return dx, dw


def launch_buggy(x, w, dy, dilation):
    return _run("buggy", x, w, dy, dilation)


def launch_fixed(x, w, dy, dilation):
    return _run("fixed", x, w, dy, dilation)


def make_inputs(*, device, gen, n=2, length=64, channels=8, dilation=2):
    """As cherimoya's tests/test_cheri.py makes them (_make_inputs: N=2, L=64, C=8, dilation=2;
    x randn (N, L, C), w randn (3, C) * 0.1), with a randn upstream gradient dy of y's shape."""
    x = torch.randn(n, length, channels, generator=gen)
    w = torch.randn(3, channels, generator=gen) * 0.1
    dy = torch.randn(n, length, channels, generator=gen)
    return {"x": x.to(device), "w": w.to(device), "dy": dy.to(device), "dilation": dilation}


def reference(x, w, dy, dilation):
    """y[l, c] = w[0, c] x[l - d, c] + w[1, c] x[l, c] + w[2, c] x[l + d, c] (zeros outside the
    sequence), then normalised over each example's (L, C) plane (population variance, eps 1e-3,
    no affine); dx and dw by autograd with the given dy."""
    x = x.detach().to(torch.float64).requires_grad_()
    w = w.detach().to(torch.float64).requires_grad_()
    n, length, _ = x.shape
    xp = torch.nn.functional.pad(x, (0, 0, dilation, dilation))
    conv = (w[0] * xp[:, 0:length] + w[1] * xp[:, dilation:dilation + length]
            + w[2] * xp[:, 2 * dilation:2 * dilation + length])
    flat = conv.reshape(n, -1)
    mean = flat.mean(dim=1, keepdim=True)
    var = flat.var(dim=1, keepdim=True, unbiased=False)
    y = ((flat - mean) / torch.sqrt(var + EPS)).reshape(conv.shape)
    dx, dw = torch.autograd.grad(y, (x, w), dy.to(torch.float64))
    return dx, dw


FUZZ = {"n": (1, 4), "length": (1, 128), "channels": (1, 64), "dilation": (1, 256)}
