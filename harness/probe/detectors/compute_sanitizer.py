"""compute-sanitizer memcheck around the reference detector, at the small sizes (GPU).

Its own log file, guard padding off (padding is valid memory and would hide an access),
``PYTORCH_NO_CUDA_MEMORY_CACHING=1``; given the option ``tool_kernels`` (names), only those kernels are checked
(``--kernel-name kne=...``): PyTorch's run unchecked, and their reports stay out.

Its case check (``detect``): ``memcheck`` reads this detector's P601 from the probe run on the case folder
(``casecheck.ProbeCheck``; ``detect`` names the kernels the case's main run compiled, as ``tool_kernels``).
compute-sanitizer writes its report to a log file, whose start (the first report) and end (the summary) is
put in front of the run's output. Its racecheck is a detector of its own (``racecheck``).
"""

from __future__ import annotations

from harness.probe.casecheck import ProbeCheck
from harness.probe.detectors import Detector, Tool, compute_sanitizer_how
from harness.probe.findings import ERROR, Code, Finding
from harness.run.gpu_tools import sanitizer_summary


def how(options: dict) -> dict | None:
    return compute_sanitizer_how("memcheck", options, True)


def findings(name: str, backend: str, output: str) -> list:
    s = sanitizer_summary(output)
    if s and s["errors"]:
        first = f"; first: {s['first']}" if s["first"] else ""
        return [Finding("P601", name, backend, f"{s['errors']} errors{first}"[:300])]
    return []


P601 = Code("P601", ERROR, "compute-sanitizer (memcheck) reported errors in the reference detector's run at the "
                           "small sizes")


# --- its case check (detect, report): how the casebook scores the same idea on its cases ---

class Memcheck(ProbeCheck):
    """The probe's compute-sanitizer detector (memcheck around its reference detector, at the small sizes),
    run on the case folder: the case's own kernels only (``detect`` passes the main run's as ``tool_kernels``)."""

    name = label = "memcheck"
    where = "gpu"
    what = "compute-sanitizer --tool memcheck, guard padding off and PYTORCH_NO_CUDA_MEMORY_CACHING=1"
    yours = "PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python your_test.py"
    order = 80
    reads = ("compute-sanitizer",)
    codes = ("P601",)


MEMCHECK = Memcheck()


DETECTOR = Detector("compute-sanitizer", "compute-sanitizer memcheck, no caching allocator", None, backends=("gpu",),
                    process={"gpu": 1}, rank=11, tool=Tool(how, findings), codes=(P601,),
                    case=(MEMCHECK,))
