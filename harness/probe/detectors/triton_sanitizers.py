"""Case checks (``detect``): Triton's own sanitizers, compiled into the kernel: ``TRITON_INSTRUMENTATION_MODE=<mode>`` (GPU).

- ``consan`` (ConSan): hazards between asynchronous operations on shared and tensor
  memory (TMA, wgmma, barriers) in one program;
- ``gsan`` (GSan): races on global memory between programs;
- ``fpsan`` (FpSan): floating-point exceptions (NaN, Inf) as they arise;
- ``iisan`` (IISan): integer overflow and out-of-range index arithmetic.

Which modes exist depends on the installed Triton (``triton_compat.instrumentation_modes``
reads the NVIDIA backend); a mode this Triton lacks is ``n/a`` with the version named.
A sanitizer reports by a device-side assertion, which ends the process: its run is one
trial at the case's small sizes, and the finding quotes the assertion.
"""

from __future__ import annotations

import re

from harness.probe.casecheck import (FLAGGED, NOT_RUN, QUIET, CaseCheck, Evidence, no_result, no_shared_memory, short,
                                    small_sizes)
from harness.probe.detectors import Detector

_REPORT = [re.compile(p) for p in (r"Assertion `([^`]*)` failed", r"((?:ConSan|GSan|FpSan|IISan)[^\n]*)",
                                   r"(device-side assert triggered)")]
_WHAT = {
    "consan": "ConSan: hazards between asynchronous shared-memory operations (TMA, wgmma, barriers)",
    "gsan": "GSan: races on global memory between programs",
    "fpsan": "FpSan: floating-point exceptions (NaN, Inf) where they arise",
    "iisan": "IISan: integer overflow and out-of-range index arithmetic",
}


def _triton_version() -> str:
    try:
        import triton

        return triton.__version__
    except Exception:  # no Triton at all: the caller's message says so
        return "?"


class TritonSanitizer(CaseCheck):
    """One ``TRITON_INSTRUMENTATION_MODE`` sanitizer; the mode is the detector's name."""

    where = "gpu"

    def __init__(self, mode: str, order: int):
        self.name = self.mode = mode
        self.label = {"consan": "ConSan", "gsan": "GSan", "fpsan": "FpSan", "iisan": "IISan"}[mode]
        self.what = f"TRITON_INSTRUMENTATION_MODE={mode}: " + _WHAT[mode]
        self.yours = f"TRITON_INSTRUMENTATION_MODE={mode} python your_test.py (with triton.set_allocator); GPU only"
        self.order = order

    def extra_run(self, spec, backend: str) -> dict | str:
        from harness.run.triton_compat import instrumentation_modes

        if self.mode not in instrumentation_modes():
            return f"n/a: not available with triton {_triton_version()} (its NVIDIA backend has no {self.mode})"
        return {"trials": 1, "extra_env": {"TRITON_INSTRUMENTATION_MODE": self.mode},
                "overrides": {"sizes": small_sizes(spec, backend), "calls": spec.calls}}

    def refine(self, plan: dict, run) -> dict | str:
        """ConSan instruments shared and tensor memory only: nothing to check where the kernels use none."""
        if self.mode == "consan" and (why := no_shared_memory(run, self.name)) is not None:
            return why
        return plan

    def check(self, ev: Evidence) -> tuple[str, str]:
        """Flagged where the run's output holds a sanitizer's report (a device-side assertion); quiet where the
        run finished without one, or ended as the main run does without the sanitizer."""
        run, what = ev.extra.get(self.name), self.label
        if run is None or isinstance(run, str):
            return no_result(run, f"{what} run")
        if run.status in ("skip", "error"):
            return no_result(run)
        text = run.output_tail + "\n" + run.message
        for pat in _REPORT:
            if (m := pat.search(text)) is not None:
                return FLAGGED, f"{what} reported: {short(m.group(1), 120)}"
        silent = f"no {what} report"
        if run.status == "done":
            return QUIET, silent
        main = ev.run if ev.run is not None and not isinstance(ev.run, str) else None
        if main is not None and main.status == run.status:
            return QUIET, f"{silent} (without {what} the run ends in {run.status} too)"
        return NOT_RUN, f"the {what} run ended in {run.status} without a report: {run.message}"

# case checks only (detect, on a GPU): the probe does not run them on a user's kernel yet
DETECTOR = Detector("triton-sanitizers", "TRITON_INSTRUMENTATION_MODE: ConSan, GSan, FpSan, IISan", None, backends=(),
                    rank=21, case=tuple(TritonSanitizer(m, 105 + i)
                                        for i, m in enumerate(("consan", "gsan", "fpsan", "iisan"))))
