"""Glue for stable-fast's Triton GroupNorm (sfast/triton/ops/group_norm.py): group_norm_forward(input,
num_groups, weight, bias, eps) on a contiguous NCHW float16 input, the path that launches
group_norm_4d_forward_kernel on a (groups, N) grid. It returns the normalized output (the launcher also
returns the per-group mean and rstd; the bug is not in them).

Only group_norm.py and the three small pure-Python files it imports (triton/ops/activation.py,
triton/ops/utils.py, utils/copy_func.py) are taken from the source distribution; the package's own
``import sfast`` (which loads its C++ extension) is never run, and nothing needs a stub.

On a GPU the glue calls the module's group_norm_forward itself. Under TRITON_INTERPRET=1 it cannot:
that launcher asserts ``input.device.type == 'cuda'``, and the kernel it launches was made by
create_group_norm_4d_forward_kernel, which copies the kernel function under a new name
(copy_func(..., name='group_norm_4d_forward_kernel_identity')); Triton 3.7's interpreter re-executes
the function's source and looks the result up by that new name (KeyError). So there the glue calls
the same create_group_norm_4d_forward_kernel (the package's triton.heuristics for BLOCK_SIZE,
num_warps, C_G and GROUP_SIZE and its triton.jit, act = identity as group_norm_forward has it), with
the module's copy_func told to keep the function's name, and launches the result as
group_norm_forward does for a contiguous input: weight and bias made contiguous, mean and rstd
allocated (N, groups) in the input's dtype, output = torch.empty_like(input), grid (groups, N), the
same arguments in the same order. Both versions get the same glue.

``affine`` chooses what the launcher is given: 1 (the default, as in upstream's own example and
diffusers' nn.GroupNorm layers) passes weight and bias; 0 passes weight=None and bias=None (an
F.group_norm without them, as diffusers' AdaGroupNorm calls it), the branch of the kernel with the bug. make_inputs returns weight and bias either way, so no tensor changes shape.
"""

import os

import torch
import torch.nn.functional as F

from harness.bugs.source import load

EPS = 1e-5  # group_norm_forward's default, and the eps of upstream's example


def _mod(variant):
    return load(__file__, variant)


_KERNELS = {}


def _interpreter_kernel(mod):
    """create_group_norm_4d_forward_kernel() with the module's copy_func keeping the function's name."""
    if id(mod) not in _KERNELS:
        copy_func = mod.copy_func

        def keep_name(f, globals=None, module=None, name=None):
            return copy_func(f, globals=globals, module=module)

        mod.copy_func = keep_name
        try:
            _KERNELS[id(mod)] = mod.create_group_norm_4d_forward_kernel()
        finally:
            mod.copy_func = copy_func
    return _KERNELS[id(mod)]


def _interpreted_forward(mod, input, num_groups, weight, bias, eps):
    """group_norm_forward's launch for a 4-d input in the contiguous format, with the kernel of
    _interpreter_kernel."""
    N, C, H, W = input.shape
    assert C % num_groups == 0
    assert mod.suggest_memory_format(input) != torch.channels_last  # the inputs are contiguous NCHW
    weight = weight.contiguous() if weight is not None else None
    bias = bias.contiguous() if bias is not None else None
    mean = torch.empty((N, num_groups), dtype=input.dtype, device=input.device)
    rstd = torch.empty((N, num_groups), dtype=input.dtype, device=input.device)
    input = input.contiguous()
    output = torch.empty_like(input)
    _interpreter_kernel(mod)[(num_groups, N)](input, weight, bias, N, C, H * W, num_groups, eps, output, mean,
                                              rstd)
    return output


def _run(variant, x, weight, bias, num_groups, affine):
    mod = _mod(variant)
    w, b = (weight, bias) if affine else (None, None)
    if os.environ.get("TRITON_INTERPRET") == "1":
        return _interpreted_forward(mod, x, num_groups, w, b, EPS)
    return mod.group_norm_forward(x, num_groups, w, b, EPS)[0]


def launch_buggy(x, weight, bias, num_groups, affine):
    return _run("buggy", x, weight, bias, num_groups, affine)


def launch_fixed(x, weight, bias, num_groups, affine):
    return _run("fixed", x, weight, bias, num_groups, affine)


def make_inputs(*, device, gen, batch=1, groups=4, group_channels=10, height=32, width=32, affine=1):
    """As group_norm.py's own check (test_group_norm) makes them: x = randn(N, C, 32, 32) in float16
    with 10 channels a group, weight and bias randn(C) in float16. That check has N = 2 and 32 groups
    (C = 320); the defaults take 1 and 4, as the interpreter's time grows with the programs, N * groups."""
    c = groups * group_channels
    x = torch.randn(batch, c, height, width, generator=gen).half()
    weight = torch.randn(c, generator=gen).half()
    bias = torch.randn(c, generator=gen).half()
    return {"x": x.to(device), "weight": weight.to(device), "bias": bias.to(device), "num_groups": groups,
            "affine": affine}


def reference(x, weight, bias, num_groups, affine):
    w, b = (weight, bias) if affine else (None, None)
    return F.group_norm(x, num_groups, w, b, EPS)


# height and width up to the latent of the README's SD XL benchmark (1024 x 1024 pixels: 128 x 128)
FUZZ = {"batch": (1, 2), "groups": (1, 8), "group_channels": (1, 20), "height": (1, 128), "width": (1, 128),
        "affine": (0, 1)}
