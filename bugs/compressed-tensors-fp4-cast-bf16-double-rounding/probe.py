"""Glue for compressed-tensors' Triton FP4 cast, compressed_tensors/quantization/utils/fp4_utils.py:
cast_to_fp4_triton(x), the backend the package's cast_to_fp4 dispatches to for a CUDA tensor (0.19.0
on; in 0.18.0 it was registered but off) and the function its own test calls directly.

Only the module and the two utility files it imports are taken out of the package (its __init__
files, which import the rest of the library, are not run); ``loguru``, which those utility files
log through, is given as the standard library's logger where it is not installed. 0.19.0's cast
rounds its (contiguous) input in place and returns it: the glue passes a copy, so the caller's
tensor is left as it was, as 0.18.0 leaves it."""

import logging

import torch

from harness.bugs.source import load


def _cast(variant, x):
    try:
        import loguru  # noqa: F401
        stubs = {}
    except ImportError:
        stubs = {"loguru": {"logger": logging.getLogger("compressed_tensors")}}
    mod = load(__file__, variant, stubs=stubs)
    return mod.cast_to_fp4_triton(x.clone())


def launch_buggy(x):
    return _cast("buggy", x)


def launch_fixed(x):
    return _cast("fixed", x)


def make_inputs(*, device, gen, n=1000):
    """torch.randn(n) in fp32, as test_cast_to_fp4_cpu_gpu_match makes it (its sizes 1 to 1000)."""
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    """The nearest FP4 E2M1 value with the package's own thresholds (its torch cast_to_fp4): 0 up to
    0.25, 0.5 below 0.75, 1 up to 1.25, 1.5 below 1.75, 2 up to 2.5, 3 below 3.5, 4 up to 5, else 6,
    with the input's sign; compared in the input's own precision, as an exact cast must."""
    a = x.abs()
    out = torch.full_like(a, 6.0)
    for bound, value, inclusive in ((5.0, 4.0, True), (3.5, 3.0, False), (2.5, 2.0, True), (1.75, 1.5, False),
                                    (1.25, 1.0, True), (0.75, 0.5, False), (0.25, 0.0, True)):
        below = a <= bound if inclusive else a < bound
        out = torch.where(below, torch.full_like(a, value), out)
    out = torch.where(torch.isnan(a), a, out)  # NaN stays NaN, as in the torch cast
    return torch.where(x < 0, -out, out)


FUZZ = {"n": (1, 1000)}


