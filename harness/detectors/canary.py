"""``canary``: outputs and their padding start as a canary; changed padding or leftover canary is reported."""

from __future__ import annotations

from harness.detectors.base import FLAGGED, QUIET, Detector, Evidence, no_result


class Canary(Detector):
    name = "canary"
    label = "canary writes"
    what = "outputs and their padding start as a canary: changed padding or leftover canary is reported"
    yours = "fill outputs and a margin around them with a sentinel; check both after the call"
    order = 50

    def check(self, ev: Evidence) -> tuple[str, str]:
        if (r := no_result(ev.run)) is not None:
            return r
        past, unwritten = {}, {}
        for t in ev.run.trials:
            for k, v in t.guard["wrote_past_end"].items():
                past[k] = max(past.get(k, 0), v)
            for k, v in t.guard["unwritten"].items():
                unwritten[k] = max(unwritten.get(k, 0), v)
        parts = [f"wrote {v} padding elements around {k}" for k, v in past.items()]
        parts += [f"left {v} elements of {k} unwritten" for k, v in unwritten.items()]
        if parts:
            return FLAGGED, "; ".join(parts)
        return QUIET, "padding and output canaries intact"


DETECTORS = (Canary(),)
