"""``triton-viz`` (interpreter, optional): triton-viz's symbolic sanitizer around the reference detector, a tool.

``harness.run.viz_worker`` wraps the probe's worker, every ``@triton.jit`` kernel traced by triton-viz,
and prints one line this detector reads (P603). It runs with guard padding off (the probe's ``pad`` 0, as
every tool), since triton-viz 3.0 counts a padded view's offset twice. Opt-in (``--tools``), as the GPU's
tools. Checked with triton-viz 3.0 on Triton 3.7.1 (``pip install triton-viz`` in a virtual environment
with ``--system-site-packages``; run the harness with that environment's python).

Its case check, ``triton-viz`` (``detect``), reads P603 from the probe run on the case folder
(``casecheck.ProbeCheck``).
"""

from __future__ import annotations

import importlib.util
import re
import sys

from harness.probe.casecheck import DEAD, NOT_RUN, Evidence, ProbeCheck, count
from harness.probe.detectors import Detector, Tool
from harness.probe.findings import WARNING, Code, Finding
from harness.run import viz_worker

MARK, UNAVAILABLE = viz_worker.MARK, viz_worker.UNAVAILABLE
_VIZ = re.compile(re.escape(MARK) + r" (\d+) out-of-bounds accesses(?:; first: (.*))?")
MISSING = "triton-viz is not installed (optional: pip install triton-viz)"


def how(options: dict) -> dict | None:
    if importlib.util.find_spec("triton_viz") is None:
        return None
    return {"wrapper": [sys.executable, "-m", viz_worker.__name__], "small": False}


def findings(name: str, backend: str, output: str) -> list:
    """P603 from the wrapper's line; a P000 warning where triton-viz could not wrap the kernels."""
    if UNAVAILABLE in output:
        line = output.split(UNAVAILABLE, 1)[1].splitlines()[0].strip()
        return [Finding("P000", name, backend, f"triton-viz unavailable: {line}"[:300], severity=WARNING)]
    m = _VIZ.search(output)
    if m is None or not int(m.group(1)):
        return []
    first = f"; first: {m.group(2)}" if m.group(2) else ""
    return [Finding("P603", name, backend, f"{count(int(m.group(1)), 'out-of-bounds access', 'es')}{first}"[:300],
                    severity=WARNING)]


P603 = Code("P603", WARNING, "triton-viz's symbolic sanitizer found a load or store that can leave its tensor "
                             "(z3, from the traced addresses and masks: a warning, as its 3.0 flags two of the "
                             "casebook's correct kernels)", ("add-missing-mask", "attention-seq-tail"))


# --- its case check (detect, report): how the casebook scores the same idea on its cases ---

class TritonViz(ProbeCheck):
    name = label = "triton-viz"
    where = "interpreter"
    what = "triton-viz's symbolic sanitizer (z3) checks every load and store against its tensor's bounds"
    yours = "pip install triton-viz; triton-sanitizer your_test.py"
    order = 110
    reads = ("triton-viz",)
    codes = ("P603",)

    def check(self, ev: Evidence) -> tuple[str, str]:
        """As every check that reads the probe, but for triton-viz's own failures: where it could not wrap the
        kernels, or where the launcher raised, the kernel did not compile or hung under it and not in the case's
        main run (triton-viz 3.0 fails on ``tl.dot`` of 1-D blocks, ``atomic_rmw``, loops it rewrites), it is
        ``not run``, not n/a."""
        p = ev.probe
        mine = [f for f in p.get("findings", []) if f.get("detector") == self.name] if isinstance(p, dict) else []
        gone = [f for f in mine if f.get("code") == "P000"
                and f.get("message", "").startswith("triton-viz unavailable")]
        if gone:
            return NOT_RUN, gone[0]["message"]
        raised = [f for f in mine if f.get("code") in DEAD and f.get("severity") != "info"]
        main = ev.run if ev.run is not None and not isinstance(ev.run, str) else None
        if raised and not any(f.get("code") in self.codes for f in mine) and getattr(main, "status", "") == "done":
            return NOT_RUN, f"triton-viz failed (the case's main run did not): {raised[0].get('message', '')}"
        return super().check(ev)


# a peer tool the casebook scores beside its own: on the interpreter, opt-in (--tools)
DETECTOR = Detector("triton-viz", "triton-viz's symbolic sanitizer (optional)", None, backends=("interpreter",),
                    process={"interpreter": 9}, rank=22, tool=Tool(how, findings, MISSING),
                    codes=(P603,), case=(TritonViz(),))
