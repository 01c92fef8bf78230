"""Outside its tensors? On a GPU there is no bounds check to run, but every input sits between
guard bands: the failing sizes run once with NaN in the bands and once with 0. A result that
changes between the two read what lies past a tensor; a band that changed was written. (Under
the interpreter the "where" experiment sees the access itself, at its line.)"""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import fmt
from harness.probe.experiments import Experiment


def run(ctx, failing: dict) -> dict:
    import torch

    if ctx.backend != "gpu" or not X.PAD:
        return {}
    t = ctx.target
    ctx.trying = failing
    try:
        inputs = X.make(t, failing, ctx.seed, ctx.backend)
        ref = X.reference(t, inputs)
    except Exception:  # noqa: BLE001  make_inputs or the reference declined these sizes
        return {}
    # a first call at these sizes (autotune's benchmarking runs write the output too) before those
    # compared, and each fill twice: elements that move between two runs alike (a race, a stream not
    # waited for) are not the bands' doing
    X.call(t, X.clone_inputs(inputs), backend=ctx.backend, watch=ctx.watch, ref=ref)
    nan = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, watch=ctx.watch, ref=ref)
    if nan.error is not None:
        return {}
    ev = {}
    if past := nan.guard.get("wrote_past_end"):
        ev["oob-store"] = f"at {fmt(failing)}: wrote into the guard bands past {', '.join(map(repr, past))}"
    from harness.probe.kernels import known_facts

    if known_facts(ctx).atomics or ctx.late():  # atomics' order changes results between any two
        return ev                                          # runs: no comparison (nor past the deadline)
    runs = [nan] + [X.call(t, X.clone_inputs(inputs), backend=ctx.backend, watch=ctx.watch, ref=ref, finite=finite)
                    for finite in (True, False, True)]  # NaN, 0, NaN, 0: the same change twice
    outs = [c.out for c in runs]
    if all(c.error is None for c in runs) and all(hasattr(o, "shape") and o.shape == nan.out.shape for o in outs):
        a, b, a2, b2 = (o.double() for o in outs)

        def same(x, y):
            return (x == y) | (torch.isnan(x) & torch.isnan(y))

        differ = ~same(a, b) & ~same(a2, b2) & same(a, a2) & same(b, b2)
        if bool(differ.any()):
            ev["oob-load"] = f"at {fmt(failing)}: {int(differ.sum())} result elements change with what the guard " \
                             f"bands around the inputs hold (NaN or 0): the kernel reads past a tensor"
    return ev


EXPERIMENT = Experiment("bands", "reads or writes past its tensors, seen through guard bands (GPU)?", run, rank=-2)
