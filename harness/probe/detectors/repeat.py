"""The same inputs, several runs: results that differ bitwise (atomics' order, races, autotune)."""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.casecheck import ProbeCheck
from harness.probe.context import crash
from harness.probe.detectors import Detector, uses_atomics_or_autotune
from harness.probe.findings import NONDETERMINISM, WARNING, Code, nondeterminism_severity

RUNS = 3


def run(ctx) -> list:
    from harness.core.compare import fingerprint

    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)
    prints, close, runs = set(), True, []
    for i in range(RUNS + 1):  # the first run only tunes (autotune): first-call compares that one
        with ctx.instrument(poison_masked=False):
            c = ctx.call(X.clone_inputs(inputs), ref=ref)
        if c.error is not None:
            return [crash(ctx, c.error, t.sizes)]
        if i:
            prints.add(fingerprint(c.out))
            close = close and c.cmp["close"]
            runs.append(c)
    if len(prints) > 1:
        sev, note = nondeterminism_severity(t) if close else ("error", " (and some of them are wrong)")
        if not close and (spread := _rounding_only(runs)) is not None:
            sev, note = nondeterminism_severity(t)[0], f" (all of them wrong, and by about as much: they differ " \
                                                       f"by {spread:.3g} from each other, far less than from the " \
                                                       f"reference; the order moves only the last bits)"
        return [ctx.finding("P501", f"{len(prints)} distinct results in {RUNS} identical runs{note}", severity=sev)]
    return []


def _rounding_only(runs: list) -> float | None:
    """How far apart runs that are ALL wrong are, where that is under 1% of how wrong each is (the
    order of float atomics moving the last bits of a result that is wrong for another reason); else None."""
    import torch

    outs = [c.out for c in runs]
    if any(c.cmp["close"] for c in runs) or not all(isinstance(o, torch.Tensor) and o.shape == outs[0].shape
                                                    for o in outs):
        return None
    a = outs[0].double()
    spread = max(float((o.double() - a).abs().nan_to_num(float("inf")).max()) if o.numel() else 0.0
                 for o in outs[1:])
    worst = min(float(c.cmp.get("max_abs") or 0.0) for c in runs)
    return spread if worst > 0 and spread <= 0.01 * worst else None


P501 = Code("P501", WARNING, "identical runs give different results", ("nrm2-atomic-order",),
            otherwise=NONDETERMINISM + "; an error where the runs are wrong too")


# --- its case check (detect, report): how the casebook scores the same idea on its cases ---

class Repeat(ProbeCheck):
    name = "repeat"
    label = "repeat runs"
    what = "the probe's repeat: the same inputs run again after the first call, compared bitwise (P501)"
    yours = "python -m harness probe your_kernel.py (or run it 10-20 times and compare hashes of the bytes)"
    order = 20
    reads = ("repeat",)
    codes = ("P501",)


DETECTOR = Detector("repeat", "identical runs, bitwise", run, process={"interpreter": 0, "gpu": 0}, rank=5,
                    skip=uses_atomics_or_autotune, codes=(P501,),
                    case=(Repeat(),))
