"""After the diagnosis, the sizes that shape fuzzing left: under the probe's budget, fuzzing stops
at its first failure to keep the diagnosis its time (``Budget.reserve``); what time the diagnosis
leaves goes back to the sizes not yet tried, and each new way of failing is shape fuzzing's finding.
A kernel with two bugs, or one whose bug shows only past another that its fixed version shares,
needs the sizes after the first failure.
"""

from __future__ import annotations

from harness.probe.budget import REST_MIN_LEFT_S
from harness.probe.context import Context
from harness.probe.detectors import Detector
from harness.probe.detectors import shapes


def rest(ctx: Context) -> list:
    """The sizes shape fuzzing left when a failure cut it short for the diagnosis, run in the time
    the diagnosis left: a mechanism other than the first (a second bug, or one that shows only past
    a bug that the fixed kernel shares) is reported too. Its findings are shape fuzzing's."""
    st, ctx.board.fuzz_left = ctx.board.fuzz_left, None
    ctx.name = "shapes"
    ctx.board.fuzz_now = {"st": st}  # what the budget's end keeps (shapes.partial)
    before = set(st["classes"])
    shapes.try_sizes(ctx, st)
    new = {k: v for k, v in st["classes"].items() if k not in before}
    found = shapes.report_classes(ctx, st, new) if new else []
    ctx.board.fuzz_now = None
    return found


def _skip(ctx: Context) -> str | None:
    st = ctx.board.fuzz_left
    if st is None:
        return "shape fuzzing was not cut short (it ran its sizes or its own time)"
    if ctx.budget.ends is not None and ctx.budget.left() < REST_MIN_LEFT_S[ctx.backend]:
        ctx.board.fuzz_left = None
        return "the probe's budget is spent"
    return None


DETECTOR = Detector("shapes-rest", "the sizes shape fuzzing left for the diagnosis, in the time the diagnosis left", rest,
                    process={"interpreter": 0, "gpu": 0}, rank=9, skip=_skip, partial=shapes.partial,
                    codes=shapes.DETECTOR.codes)
