"""Where does it go wrong? The failing sizes run once more under the instrumented
interpreter's bounds check, with 0 in masked lanes as a GPU gives today: a load or store
outside its tensor at these sizes is the mechanism, seen at its line (the probe's memcheck
detector ran at the default sizes, where the kernel may well stay inside)."""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import fmt
from harness.probe.experiments import Experiment


def run(ctx, failing: dict) -> dict:
    if ctx.backend != "interpreter":  # the bounds check is the instrumented interpreter's
        return {}
    t = ctx.target
    ctx.trying = failing
    try:
        inputs = X.make(t, failing, ctx.seed, ctx.backend)
    except Exception:  # noqa: BLE001  make_inputs declined these sizes: nothing to see
        return {}
    with ctx.instrument(memcheck=True, poison_masked=False) as rec:
        X.call(t, inputs, backend=ctx.backend)
    ev = {}
    for (kind, tensor, side, line), hit in sorted(rec.oob.items(), key=lambda kv: kv[0][3]):
        name = "oob-load" if kind == "load" else "oob-store"
        ev.setdefault(name, f"at {fmt(failing)}: {hit['kernel']}: {kind} {side} of '{tensor}' by up to "
                            f"{hit['elements']} elements (program {hit['pid']}) at {line}")
    return ev


EXPERIMENT = Experiment("where", "a load or store outside its tensor at the failing sizes?", run, rank=-2)
