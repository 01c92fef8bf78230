"""``triton-viz`` (a case check, ``detect``; interpreter, optional): one trial with triton-viz's sanitizer around each kernel.

``harness.run.viz_worker`` wraps the worker and prints one line this detector reads.
It runs with guard padding off (pad 0: plain tensors), since triton-viz 3.0 counts a
padded view's offset twice. Checked with triton-viz 3.0 on Triton 3.7.1 (``pip install
triton-viz`` in a virtual environment with ``--system-site-packages``; run ``detect`` with
that environment's python).
"""

from __future__ import annotations

import importlib.util
import re
import sys

from harness.probe.casecheck import FLAGGED, NA, NOT_RUN, QUIET, CaseCheck, Evidence, count, no_result
from harness.probe.detectors import Detector
from harness.run import viz_worker

MARK, UNAVAILABLE = viz_worker.MARK, viz_worker.UNAVAILABLE
_VIZ = re.compile(re.escape(MARK) + r" (\d+) out-of-bounds accesses(?:; first: (.*))?")


class TritonViz(CaseCheck):
    name = label = "triton-viz"
    where = "interpreter"
    what = "triton-viz's symbolic sanitizer (z3) checks every load and store against its tensor's bounds"
    yours = "pip install triton-viz; triton-sanitizer your_test.py"
    order = 110

    def extra_run(self, spec, backend: str) -> dict | str:
        if importlib.util.find_spec("triton_viz") is None:
            return "not run: triton-viz is not installed (optional: pip install triton-viz)"
        # triton-viz 3.0 adds a padded view's storage offset twice: plain tensors (pad 0) only
        return {"trials": 1, "wrapper": [sys.executable, "-m", viz_worker.__name__], "overrides": {"pad": 0}}

    def check(self, ev: Evidence) -> tuple[str, str]:
        run = ev.extra.get(self.name)
        if run is None or isinstance(run, str):
            return no_result(run, "triton-viz run")
        if run.status == "skip":
            return NA, f"not run on this backend: {run.message}"
        if UNAVAILABLE in run.output_tail:
            line = run.output_tail.split(UNAVAILABLE, 1)[1].splitlines()[0]
            return NOT_RUN, f"triton-viz unavailable:{line}"
        m = _VIZ.search(run.output_tail)
        if m is not None and int(m.group(1)):
            first = f"; first: {m.group(2)}" if m.group(2) else ""
            return FLAGGED, f"{count(int(m.group(1)), 'out-of-bounds access', 'es')}{first}"
        if run.status == "done" and m is not None:
            return QUIET, "no load or store can leave its tensor"
        main = ev.run if ev.run is not None and not isinstance(ev.run, str) else None
        if main is not None and main.status == run.status and main.message == run.message and run.message:
            # the case itself ends so, with or without triton-viz (a launcher that raises): not the tool's failure
            return NA, f"the case itself ends in {run.status} before triton-viz sees a launch: {run.message}"
        return NOT_RUN, f"triton-viz failed: {run.status}: {run.message or 'no message'}"


# a case check only (detect, on the interpreter): a peer tool the casebook scores beside its own
DETECTOR = Detector("triton-viz", "triton-viz's symbolic sanitizer (optional)", None, backends=(), rank=22,
                    case=(TritonViz(),))
