"""After the diagnosis, the sizes that shape fuzzing left: under the probe's budget, fuzzing stops
at its first failure to keep the diagnosis its time (``Context.reserve``); what time the diagnosis
leaves goes back to the sizes not yet tried, and each new way of failing is shape fuzzing's finding.
A kernel with two bugs, or one whose bug shows only past another that its fixed version shares,
needs the sizes after the first failure.
"""

from __future__ import annotations

import time

from harness.probe.context import Context
from harness.probe.detectors import Detector
from harness.probe.detectors import shapes

MIN_LEFT_S = {"interpreter": 2.0, "gpu": 1.0}  # it does not start with less of the probe's budget left


def rest(ctx: Context) -> list:
    """The sizes shape fuzzing left when a failure cut it short for the diagnosis, run in the time
    the diagnosis left: a mechanism other than the first (a second bug, or one that shows only past
    a bug that the fixed kernel shares) is reported too. Its findings are shape fuzzing's."""
    st = ctx.later.pop("shapes")
    ctx.name = "shapes"
    ctx.later["shapes-now"] = {"st": st}  # what the budget's end keeps (shapes.partial)
    before = set(st["classes"])
    shapes._try_sizes(ctx, st)
    new = {k: v for k, v in st["classes"].items() if k not in before}
    found = shapes._reported(ctx, st, new) if new else []
    ctx.later.pop("shapes-now", None)
    return found


def _skip(ctx: Context) -> str | None:
    st = ctx.later.get("shapes")
    if st is None:
        return "shape fuzzing was not cut short (it ran its sizes or its own time)"
    if ctx.ends is not None and ctx.ends - time.monotonic() < MIN_LEFT_S[ctx.backend]:
        ctx.later.pop("shapes")
        return "the probe's budget is spent"
    return None


DETECTOR = Detector("shapes-rest", "the sizes shape fuzzing left for the diagnosis, in the time the diagnosis left", rest,
                    process={"interpreter": 0, "gpu": 0}, rank=9, skip=_skip, partial=shapes.partial)
