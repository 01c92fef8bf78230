"""TF32? On a GPU, ``tl.dot`` of fp32 operands with the default ``input_precision`` rounds its
inputs to TF32 (10 bits of mantissa). The failing sizes run once more with Triton's fp32
default set to "ieee" (``TRITON_F32_DEFAULT``), the kernels compiled afresh into a cache of
their own: right then, and the kernel's precision is TF32's. (Under the interpreter the
reference detector emulates the rounding and tells the same thing: P204.)"""

from __future__ import annotations

from harness.probe.context import fmt
from harness.probe.experiments import Experiment, outcome
from harness.probe.kernels import jitted
from harness.probe.tf32_rounding import ieee


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
