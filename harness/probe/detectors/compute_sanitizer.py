"""compute-sanitizer memcheck around the reference detector, at the small sizes (GPU).

Run as ``harness.detectors.sanitizer`` runs it: its own log file, guard padding off (padding
is valid memory and would hide an access), ``PYTORCH_NO_CUDA_MEMORY_CACHING=1``.
"""

from __future__ import annotations

from harness.probe.detectors import Detector, Tool
from harness.probe.findings import ERROR, Code, Finding


def how() -> dict | None:
    from harness.run.gpu_tools import compute_sanitizer, wrapper

    cs = compute_sanitizer()
    if cs is None:
        return None
    return {"wrapper": wrapper(cs, "memcheck"), "extra_env": {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"},
            "log_file": True, "small": True}


def findings(name: str, backend: str, output: str) -> list:
    from harness.run.gpu_tools import sanitizer_summary

    s = sanitizer_summary(output)
    if s and s["errors"]:
        first = f"; first: {s['first']}" if s["first"] else ""
        return [Finding("P601", name, backend, f"{s['errors']} errors{first}"[:300])]
    return []


P601 = Code("P601", ERROR, "compute-sanitizer (memcheck) reported errors in the reference detector's run at the "
                           "small sizes")


DETECTOR = Detector("compute-sanitizer", "compute-sanitizer memcheck, no caching allocator", None, backends=("gpu",),
                    process={"gpu": 1}, rank=11, tool=Tool(how, findings), codes=(P601,))
