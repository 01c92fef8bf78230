"""TF32? On a GPU, ``tl.dot`` of fp32 operands with the default ``input_precision`` rounds its
inputs to TF32 (10 bits of mantissa). The failing sizes run once more with Triton's fp32
default set to "ieee" (``TRITON_F32_DEFAULT``), the kernels compiled afresh into a cache of
their own: right then, and the kernel's precision is TF32's. (Under the interpreter the
reference detector emulates the rounding and tells the same thing: P204.)"""

from __future__ import annotations

import contextlib

from harness.probe.context import fmt
from harness.probe.experiments import Experiment, outcome
from harness.probe.kernels import jitted


def _forget(kernels) -> None:
    for k in kernels:  # the compiled binaries a launch would reuse
        for attr in ("device_caches", "cache"):
            c = getattr(k, attr, None)
            if hasattr(c, "clear"):
                c.clear()


@contextlib.contextmanager
def ieee(target):
    import os
    import tempfile

    from triton import knobs

    from harness.run.patching import Patcher

    kernels = jitted(target)
    with tempfile.TemporaryDirectory(prefix="casebook-ieee-") as d, Patcher() as patch:
        patch.callback(lambda: _forget(kernels))  # undone last: the kernels built under ieee are dropped
        # the environment first: setting a knob also writes its variable, and the stack must hold the old one
        patch.setitem(os.environ, "TRITON_F32_DEFAULT", "ieee")
        patch.setitem(os.environ, "TRITON_CACHE_DIR", d)
        patch.setattr(knobs.language, "fp32_default", "ieee")
        patch.setattr(knobs.cache, "dir", d)
        _forget(kernels)
        yield


def run(ctx, failing: dict) -> dict:
    if ctx.backend != "gpu":
        return {}
    src = " ".join(getattr(k, "src", "") or "" for k in jitted(ctx.target))
    if ".dot(" not in src:
        return {}
    if outcome(ctx, failing)[0] != "wrong":
        return {}
    try:
        from harness.probe import execute as X

        with ieee(ctx.target):  # its own inputs: not the plain run the other experiments share
            state = outcome(ctx, failing, X.make(ctx.target, failing, ctx.seed, ctx.backend))[0]
    except (ImportError, AttributeError):  # a Triton without these knobs
        return {}
    if state == "right":
        return {"tf32": f"wrong at {fmt(failing)}; right with Triton's fp32 default input_precision set to "
                        f"'ieee' (TRITON_F32_DEFAULT=ieee): tl.dot's TF32 rounding"}
    return {}


EXPERIMENT = Experiment("tf32", "right once tl.dot's fp32 inputs are not rounded to TF32 (GPU)?", run, rank=5)
