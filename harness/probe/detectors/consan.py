"""``TRITON_INSTRUMENTATION_MODE=consan`` (ConSan) around the reference detector at the small sizes (GPU): hazards
between asynchronous operations on shared and tensor memory (TMA, wgmma, barriers) in one program.

One of Triton's own sanitizers, compiled into the kernel (``_triton_sanitizer``: what the four share); a Triton
without the mode skips it. Opt-in (``--tools``), as the GPU's other tools.

Its case check, ``consan`` (``detect``), reads this detector's P605 from the probe run on the case folder
(``casecheck.ProbeCheck``); n/a where this Triton lacks the mode. It is n/a without a run where the kernels
the case's main run compiled use no shared memory (``ProbeCheck.drop``), the only memory it checks.
"""

from __future__ import annotations

from harness.probe.casecheck import no_shared_memory
from harness.probe.detectors import Detector
from harness.probe.detectors._triton_sanitizer import SanitizerCheck, tool
from harness.probe.findings import ERROR, Code

P605 = Code("P605", ERROR, "Triton's ConSan (TRITON_INSTRUMENTATION_MODE=consan) reported a hazard between asynchronous"
                           " shared-memory operations in the reference detector's run at the small sizes")


# --- its case check (detect, report): how the casebook scores the same idea on its cases ---

class ConSan(SanitizerCheck):
    mode = "consan"
    what = ("TRITON_INSTRUMENTATION_MODE=consan: ConSan: hazards between asynchronous shared-memory operations (TMA, "
            "wgmma, barriers)")
    order = 105
    codes = ("P605",)

    def drop(self, run) -> str | None:
        """ConSan instruments shared and tensor memory only: nothing to check where the kernels use none."""
        return no_shared_memory(run, self.name)


DETECTOR = Detector("consan", "TRITON_INSTRUMENTATION_MODE=consan: ConSan", None, backends=("gpu",), process={"gpu": 3},
                    rank=14, tool=tool("consan", "P605", ERROR), codes=(P605,), case=(ConSan(),))
