"""``repeat``: the same inputs N times; the results must be bitwise identical."""

from __future__ import annotations

from harness.detectors.base import FLAGGED, NA, QUIET, Detector, Evidence, no_result


def by_call(trials: list) -> dict[int, list]:
    out: dict[int, list] = {}
    for t in trials:
        out.setdefault(t.call, []).append(t)
    return out


class Repeat(Detector):
    name = "repeat"
    label = "repeat runs"
    what = "runs the kernel N times on the same inputs and compares the results bitwise"
    yours = "run it 10-20 times and compare hashes of the bytes, not allclose"
    order = 20

    def check(self, ev: Evidence) -> tuple[str, str]:
        if (r := no_result(ev.run)) is not None:
            return r
        calls = by_call(ev.run.trials)
        if max(len(ts) for ts in calls.values()) < 2:
            return NA, "one run only: nothing to compare"
        parts = []
        for call, ts in sorted(calls.items()):
            distinct = len({t.fingerprint for t in ts})
            if distinct > 1:
                parts.append(f"call {call + 1}: {distinct} distinct results over {len(ts)} runs")
        if parts:
            allowed = ev.variant == "fixed" and not getattr(ev.spec, "deterministic", True)
            note = " (the case allows the fixed kernel to vary: deterministic = false)" if allowed else ""
            return FLAGGED, "; ".join(parts) + note
        n = max(len(ts) for ts in calls.values())
        return QUIET, f"bitwise identical over {n} runs"


DETECTORS = (Repeat(),)
