"""The first call (autotune tunes here) against the second, each on fresh copies of the inputs:
autotune's benchmarking runs repeat atomics and in-place updates before the real launch."""

from __future__ import annotations

from harness.core.events import Trial
from harness.probe import execute as X
from harness.probe.casecheck import FLAGGED, NA, QUIET, CaseCheck, Evidence, no_result, small_sizes
from harness.probe.context import crash, wrong
from harness.probe.detectors import Detector, uses_atomics_or_autotune
from harness.probe.findings import ERROR, Code


def run(ctx) -> list:
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)
    calls = []
    for _ in range(2):
        with ctx.instrument(poison_masked=False):
            calls.append(ctx.call(X.clone_inputs(inputs), ref=ref, counter=ctx.counter))
        if calls[-1].error is not None:
            return [crash(ctx, calls[-1].error, t.sizes)]
    first, second = calls
    if first.bench_launches:
        ctx.board.autotune = True
    tuned = f"; autotune launched the kernel {first.bench_launches} times during the first call" \
        if first.bench_launches else ""
    if first.cmp["close"] == second.cmp["close"]:
        return []
    bad, good = ("first", "second") if not first.cmp["close"] else ("second", "first")
    w = first if bad == "first" else second
    return [ctx.finding("P502", f"the {bad} call is wrong and the {good} is right: {wrong(w.cmp)}{tuned}")]


P502 = Code("P502", ERROR, "the first call differs from later calls (autotune's benchmarking runs on the real "
                           "buffers)", ("inplace-autotune", "autotune-hides-partial-write"))


# --- its case checks (detect, report): how the casebook scores the same idea on its cases ---

WORD = {True: "wrong", False: "right"}


def first_vs_later(trials: list) -> tuple[str, str]:
    per_trial: dict[int, dict[int, Trial]] = {}
    for t in trials:
        per_trial.setdefault(t.trial, {})[t.call] = t
    pairs = [calls for calls in per_trial.values() if 0 in calls and len(calls) > 1]
    if not pairs:
        return NA, "no second call to compare with"
    for calls in pairs:
        first = calls[0]
        for k in sorted(calls)[1:]:
            if first.bad != calls[k].bad:
                tuned = sum(first.bench_calls)
                note = f"; autotune ran the kernel {tuned} times before call 1" if tuned else ""
                return FLAGGED, f"call 1 {WORD[first.bad]} ({first.result}), " \
                                f"call {k + 1} {WORD[calls[k].bad]}{note}"
    both = {c.bad for calls in pairs for c in calls.values()}
    return QUIET, f"first and later calls agree ({' and '.join(WORD[b] for b in sorted(both))})"


class FirstCall(CaseCheck):
    name = "first-call"
    label = "first call"
    what = "compares the first call (which autotunes) with later calls in the same process"
    yours = "test a freshly autotuned kernel on a new shape, first call included; never warm up first"
    order = 30

    def extra_run(self, spec, backend: str) -> dict | None:
        if spec.calls != 1:  # the main run already has later calls to compare with
            return None
        return {"trials": 2, "overrides": {"calls": 2, "sizes": small_sizes(spec, backend)}}

    def check(self, ev: Evidence) -> tuple[str, str]:
        run = ev.extra.get(self.name, ev.run)
        if (r := no_result(run, "two-call run")) is not None:
            return r
        return first_vs_later(run.trials)


DETECTOR = Detector("first-call", "the first call against the second (autotune)", run,
                    process={"interpreter": 0, "gpu": 0}, rank=6, skip=uses_atomics_or_autotune, codes=(P502,),
                    case=(FirstCall(),))
