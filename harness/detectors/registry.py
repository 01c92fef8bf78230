"""Every detector, found in its own module of this package, and what is done with all of them.

A module of ``harness.detectors`` that lists ``Detector`` instances in ``DETECTORS`` adds
them here, in the order of their ``order``; nothing else names them. ``evaluate`` runs
the per-backend ones on one variant's evidence, ``compare_backends`` the one that sets
the GPU against the interpreter, and ``outcome`` and ``score`` say how each did.
"""

from __future__ import annotations

import importlib
import pkgutil

from harness.detectors.base import (  # noqa: F401  (re-exported: readers of findings use them)
    FLAGGED, NA, NOT_RUN, QUIET, WHERE, AcrossDetector, Detector, Evidence, DetectorResult, short)

# Modules of this package that hold no detector (and ``session`` imports this one).
INFRASTRUCTURE = frozenset({"base", "registry", "session", "viz_worker"})


def _problem(det) -> str | None:
    """Why ``det`` cannot be registered, or None."""
    if not isinstance(det, Detector):
        return f"{det!r} is not a Detector"
    if not det.name or not det.label:
        return f"{det!r} has no name or label"
    if det.where not in WHERE:
        return f"{det.name}: where = {det.where!r}, not one of {', '.join(WHERE)}"
    if (det.where == "across") != isinstance(det, AcrossDetector):
        return f"{det.name}: only an AcrossDetector runs 'across', and it runs nowhere else"
    if isinstance(det, AcrossDetector):
        return f"{det.name} has no compare" if type(det).compare is AcrossDetector.compare else None
    return f"{det.name} has no check" if type(det).check is Detector.check else None


def collect(modules) -> list[Detector]:
    """The detectors that ``modules`` list, in order; a malformed one is a programming error."""
    found = [d for m in modules for d in getattr(m, "DETECTORS", ())]
    for det in found:
        if (why := _problem(det)) is not None:
            raise TypeError(f"harness.detectors: {why}")
    names = [d.name for d in found]
    if twice := sorted({n for n in names if names.count(n) > 1}):
        raise ValueError(f"harness.detectors: more than one detector named {', '.join(twice)}")
    if sum(isinstance(d, AcrossDetector) for d in found) != 1:
        raise ValueError("harness.detectors: records keep one GPU-against-interpreter finding, "
                         "so exactly one detector runs 'across'")
    return sorted(found, key=lambda d: (d.order, d.name))


def _modules() -> list:
    """Every module of this package but the infrastructure, by name."""
    names = sorted(m.name for m in pkgutil.iter_modules(importlib.import_module(__package__).__path__))
    return [importlib.import_module(f"{__package__}.{n}") for n in names
            if n not in INFRASTRUCTURE and not n.startswith("_")]


DETECTORS: list[Detector] = collect(_modules())
BY_NAME = {d.name: d for d in DETECTORS}
ACROSS: AcrossDetector = next(d for d in DETECTORS if isinstance(d, AcrossDetector))


def applies(det: Detector, backend: str) -> bool:
    return det.applies(backend)


def evaluate(ev: Evidence, skip: frozenset = frozenset()) -> dict[str, DetectorResult]:
    """Every per-backend detector on one variant's evidence; one bad check never stops the others."""
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
