"""The layout? The same values in contiguous copies of every non-contiguous input: right
there and wrong with the given strides means the kernel assumes a layout it is not given."""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.experiments import Experiment, outcome


def run(ctx, failing: dict) -> dict:
    import torch

    inputs = X.make(ctx.target, failing, ctx.seed, ctx.backend)
    strided = [k for k, v in inputs.items() if isinstance(v, torch.Tensor) and v.numel() and not v.is_contiguous()]
    if not strided:
        return {}
    given = outcome(ctx, failing)[0]  # the failing sizes' shared run (of these very inputs)
    if given != "wrong":
        return {}
    flat = {k: v.contiguous() if k in strided else v for k, v in inputs.items()}
    if outcome(ctx, failing, flat)[0] == "right":
        shown = ", ".join(f"'{k}' (strides {tuple(inputs[k].stride())})" for k in strided[:3])
        return {"layout": f"wrong with {shown}; right with contiguous copies of the same values"}
    return {}


EXPERIMENT = Experiment("layout", "right with contiguous copies of the inputs?", run, rank=0)
