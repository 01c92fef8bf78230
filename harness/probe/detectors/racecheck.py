"""compute-sanitizer racecheck around the reference detector, at the smallest sizes (GPU): shared-memory hazards.

racecheck tracks every shared-memory access of one program, so it runs at the smallest sizes the file has
(``SMALL_SIZES``, else a case folder's ``[sizes.interpreter]``, then ``[sizes.sanitizer]``: at 8,200 keys an
attention kernel outlives its timeout under it; a hazard lies within one program, which the small sizes have
too). As compute-sanitizer's memcheck: its own log file, guard padding off, ``PYTORCH_NO_CUDA_MEMORY_CACHING=1``,
only the kernels named in the option ``tool_kernels`` checked (``--kernel-name kne=...``); a report in PyTorch's
own kernels (the reference's reduction) is a note, not the kernel's.

Its case check, ``racecheck`` (``detect``), reads this detector's P604 from the probe run on the case folder
(``casecheck.ProbeCheck``), and is n/a without a run where the kernels the case's main run compiled use no
shared memory (``ProbeCheck.drop``), the only memory racecheck checks.
"""

from __future__ import annotations

from harness.probe.casecheck import ProbeCheck, count, no_shared_memory
from harness.probe.detectors import Detector, Tool, compute_sanitizer_how
from harness.probe.findings import ERROR, INFO, Code, Finding
from harness.run.gpu_tools import in_case_kernels, sanitizer_summary


def how(options: dict) -> dict | None:
    return compute_sanitizer_how("racecheck", options, "interpreter")


def findings(name: str, backend: str, output: str) -> list:
    """P604 from racecheck's summary; a note where every report is in PyTorch's own kernels."""
    s = sanitizer_summary(output)
    if not s or not s["errors"]:
        return []
    if s["reports"] and not in_case_kernels(s["reports"], None):
        return [Finding("P604", name, backend, f"0 hazards in the kernel's own ({count(s['errors'], 'error')} in "
                                               f"PyTorch's: {s['first']})"[:300], severity=INFO)]
    first = f"; first: {s['first']}" if s["first"] else ""
    return [Finding("P604", name, backend, f"{count(s['errors'], 'error')}{first}"[:300])]


P604 = Code("P604", ERROR, "compute-sanitizer (racecheck) reported a shared-memory hazard in the reference "
                           "detector's run at the smallest sizes", otherwise="a note where every report is in "
                                                                             "PyTorch's own kernels")


# --- its case check (detect, report): how the casebook scores the same idea on its cases ---

class Racecheck(ProbeCheck):
    """The probe's racecheck detector on the case folder: the case's own kernels only (``detect`` passes the main
    run's as ``tool_kernels``), n/a without a run where they use no shared memory."""

    name = label = "racecheck"
    where = "gpu"
    what = "compute-sanitizer --tool racecheck: shared-memory hazards only, not global memory"
    yours = "compute-sanitizer --tool racecheck python your_test.py"
    order = 90
    reads = ("racecheck",)
    codes = ("P604",)

    def drop(self, run) -> str | None:
        return no_shared_memory(run, self.name)


DETECTOR = Detector("racecheck", "compute-sanitizer racecheck: shared-memory hazards", None, backends=("gpu",),
                    process={"gpu": 1}, rank=13, tool=Tool(how, findings), codes=(P604,), case=(Racecheck(),))
