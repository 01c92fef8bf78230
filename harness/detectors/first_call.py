"""``first-call``: the first call (which autotunes) against later calls in the same process.

A case that declares one call gets a run of its own: two calls per trial, at small sizes.
"""

from __future__ import annotations

from harness.core.events import Trial
from harness.detectors.base import FLAGGED, NA, QUIET, Detector, Evidence, no_result, small_sizes

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


class FirstCall(Detector):
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


DETECTORS = (FirstCall(),)
