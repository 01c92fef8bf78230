"""The same inputs, three runs, at the failing sizes (GPU): results that differ from run to run
by more than the tolerance depend on how the programs are scheduled (a program reading what
another is still writing, a race), not on float atomics' rounding, which stays inside it. (The
interpreter runs programs one after another; its order detector tells the same thing.)"""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import fmt
from harness.probe.experiments import Experiment

RUNS = 3


def run(ctx, failing: dict) -> dict:
    import torch

    if ctx.backend != "gpu":
        return {}
    t = ctx.target
    ctx.trying = failing
    try:
        inputs = X.make(t, failing, ctx.seed, ctx.backend)
        ref = X.reference(t, inputs)
    except Exception:  # noqa: BLE001
        return {}
    outs, wrong = [], 0
    for _ in range(RUNS):
        c = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, watch=ctx.watch, ref=ref)
        if c.error is not None or c.out is None or not hasattr(c.out, "shape") or not c.cmp:
            return {}
        outs.append(c.out.double().reshape(-1))
        wrong += not c.cmp["close"]
    if not wrong:
        return {}
    scale = float(ref.double().abs().max()) if hasattr(ref, "abs") and ref.numel() else 1.0
    atol = max(1e-6, 1e-3 * scale)  # run-to-run differences past rounding's reach
    first = outs[0]
    for o in outs[1:]:
        if o.shape == first.shape and not bool(torch.isclose(o, first, rtol=1e-3, atol=atol, equal_nan=True).all()):
            d = (o - first).abs().nan_to_num(float("inf"))
            return {"order": f"at {fmt(failing)}: {RUNS} runs of the same inputs differ by up to {float(d.max()):.3g} "
                             f"({wrong} of them wrong): the result depends on how the programs are scheduled"}
    return {}


EXPERIMENT = Experiment("runs", "do identical runs at the failing sizes differ by more than rounding (GPU)?", run,
                        rank=6)
