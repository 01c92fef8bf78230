"""The same inputs, several runs: results that differ bitwise (atomics' order, races, autotune)."""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import crash
from harness.probe.detectors import Detector, uses_atomics_or_autotune
from harness.probe.detectors.order import nondeterminism_severity

RUNS = 3


def run(ctx) -> list:
    from harness.core.compare import fingerprint

    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)
    prints, close = set(), True
    for i in range(RUNS + 1):  # the first run only tunes (autotune): first-call compares that one
        with ctx.instrument(poison_masked=False):
            c = ctx.call(X.clone_inputs(inputs), ref=ref)
        if c.error is not None:
            return [crash(ctx, c.error, t.sizes)]
        if i:
            prints.add(fingerprint(c.out))
            close = close and c.cmp["close"]
    if len(prints) > 1:
        sev, note = nondeterminism_severity(t) if close else ("error", " (and some of them are wrong)")
        return [ctx.finding("P501", f"{len(prints)} distinct results in {RUNS} identical runs{note}", severity=sev)]
    return []


DETECTOR = Detector("repeat", "identical runs, bitwise", run, process={"interpreter": 0, "gpu": 0}, rank=7,
                    skip=uses_atomics_or_autotune)
