"""``TRITON_INSTRUMENTATION_MODE=iisan`` (IISan) around the reference detector at the small sizes (GPU): integer
overflow and out-of-range index arithmetic.

One of Triton's own sanitizers, compiled into the kernel (``_triton_sanitizer``: what the four share); a Triton
without the mode skips it. Opt-in (``--tools``), as the GPU's other tools.

Its case check, ``iisan`` (``detect``), reads this detector's P608 from the probe run on the case folder
(``casecheck.ProbeCheck``); n/a where this Triton lacks the mode.
"""

from __future__ import annotations

from harness.probe.detectors import Detector
from harness.probe.detectors._triton_sanitizer import SanitizerCheck, tool
from harness.probe.findings import WARNING, Code

P608 = Code("P608", WARNING, "Triton's IISan (TRITON_INSTRUMENTATION_MODE=iisan) reported integer overflow or out-of-"
                             "range index arithmetic in the reference detector's run at the small sizes (a warning: "
                             "hashing and random numbers wrap on purpose)")


# --- its case check (detect, report): how the casebook scores the same idea on its cases ---

class IISan(SanitizerCheck):
    mode = "iisan"
    what = "TRITON_INSTRUMENTATION_MODE=iisan: IISan: integer overflow and out-of-range index arithmetic"
    order = 108
    codes = ("P608",)


DETECTOR = Detector("iisan", "TRITON_INSTRUMENTATION_MODE=iisan: IISan", None, backends=("gpu",), process={"gpu": 3},
                    rank=17, tool=tool("iisan", "P608", WARNING), codes=(P608,), case=(IISan(),))
