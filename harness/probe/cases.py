"""The case checks of every detector (``Detector.case``), from the one registry of detectors
(``harness.probe.detectors.registry``), and what is done with all of them for ``detect`` and ``report``.

``DETECTORS`` lists the checks in the order of their ``order`` (the report's columns, the records' keys);
nothing else names them. ``evaluate`` runs the per-backend ones on one variant's evidence,
``compare_backends`` the one that sets the GPU against the interpreter, and ``outcome`` and ``score``
say how each did.
"""

from __future__ import annotations

from harness.probe.casecheck import (  # noqa: F401  (re-exported: readers of findings use them)
    FLAGGED, NA, NOT_RUN, QUIET, WHERE, AcrossCheck, CaseCheck, DetectorResult, Evidence, short)


def _problem(check) -> str | None:
    """Why ``check`` cannot be registered, or None."""
    if not isinstance(check, CaseCheck):
        return f"{check!r} is not a CaseCheck"
    if not check.name or not check.label:
        return f"{check!r} has no name or label"
    if check.where not in WHERE:
        return f"{check.name}: where = {check.where!r}, not one of {', '.join(WHERE)}"
    if (check.where == "across") != isinstance(check, AcrossCheck):
        return f"{check.name}: only an AcrossCheck runs 'across', and it runs nowhere else"
    if isinstance(check, AcrossCheck):
        return f"{check.name} has no compare" if type(check).compare is AcrossCheck.compare else None
    return f"{check.name} has no check" if type(check).check is CaseCheck.check else None


def collect(found) -> list[CaseCheck]:
    """``found`` checks in order; a malformed one is a programming error."""
    found = list(found)
    for check in found:
        if (why := _problem(check)) is not None:
            raise TypeError(f"harness.probe.cases: {why}")
    names = [c.name for c in found]
    if twice := sorted({n for n in names if names.count(n) > 1}):
        raise ValueError(f"harness.probe.cases: more than one case check named {', '.join(twice)}")
    if sum(isinstance(c, AcrossCheck) for c in found) != 1:
        raise ValueError("harness.probe.cases: records keep one GPU-against-interpreter finding, "
                         "so exactly one check runs 'across'")
    return sorted(found, key=lambda c: (c.order, c.name))


def _registered() -> list[CaseCheck]:
    from harness.probe.detectors import registry

    return [check for det in registry().values() for check in det.case]


DETECTORS: list[CaseCheck] = collect(_registered())
BY_NAME = {d.name: d for d in DETECTORS}
ACROSS: AcrossCheck = next(d for d in DETECTORS if isinstance(d, AcrossCheck))


def applies(det: CaseCheck, backend: str) -> bool:
    return det.applies(backend)


def evaluate(ev: Evidence, skip: frozenset = frozenset()) -> dict[str, DetectorResult]:
    """Every per-backend check on one variant's evidence; one bad check never stops the others."""
    out = {}
    for det in DETECTORS:
        if det.check is None:
            continue
        if det.name in skip:
            out[det.name] = DetectorResult(NOT_RUN, "skipped (--skip)")
            continue
        if (why := det.not_applicable(ev.backend)) is not None:
            out[det.name] = DetectorResult(NA, why)
            continue
        try:
            status, reason = det.check(ev)
        except Exception as e:  # a detector's own bug is one line, not a traceback
            status, reason = NOT_RUN, f"detector failed: {type(e).__name__}: {e}"
        out[det.name] = DetectorResult(status, short(reason))
    return out


def compare_backends(gpu_verdicts: list | None, interp_verdicts: list | None) -> tuple[str, str]:
    """The GPU-against-interpreter finding for one variant, from each backend's verdicts."""
    try:
        status, reason = ACROSS.compare(gpu_verdicts, interp_verdicts)
    except Exception as e:  # as in evaluate
        status, reason = NOT_RUN, f"detector failed: {type(e).__name__}: {e}"
    return status, reason


def outcome(broken: str, fixed: str) -> str:
    """One word for a detector on one case: caught, missed, false alarm, ..."""
    if fixed == FLAGGED:
        return "caught, false alarm" if broken == FLAGGED else "false alarm"
    if broken == FLAGGED:
        return "caught"
    if broken == QUIET:
        return "missed"
    return broken


def score(rows: list[tuple[str, str, str]]) -> dict:
    """DataRaceBench-style counts from (variant, status, ...) rows of one detector.

    True positive: a broken kernel flagged; false negative: a broken kernel not
    flagged; false positive: a fixed kernel flagged; true negative: a fixed kernel
    quiet. n/a and not run count apart.
    """
    c = {"tp": 0, "fn": 0, "fp": 0, "tn": 0, "na": 0}
    for variant, status, *_ in rows:
        if status not in (FLAGGED, QUIET):
            c["na"] += 1 if variant == "broken" else 0
        elif variant == "broken":
            c["tp" if status == FLAGGED else "fn"] += 1
        else:
            c["fp" if status == FLAGGED else "tn"] += 1
    judged = c["tp"] + c["fn"]
    c["recall"] = c["tp"] / judged if judged else None
    flagged = c["tp"] + c["fp"]
    c["precision"] = c["tp"] / flagged if flagged else None
    return c
