"""``TRITON_INSTRUMENTATION_MODE=fpsan`` (FpSan) around the reference detector at the small sizes (GPU): floating-
point exceptions (NaN, Inf) as they arise.

One of Triton's own sanitizers, compiled into the kernel (``_triton_sanitizer``: what the four share); a Triton
without the mode skips it. Opt-in (``--tools``), as the GPU's other tools.

Its case check, ``fpsan`` (``detect``), reads this detector's P607 from the probe run on the case folder
(``casecheck.ProbeCheck``); n/a where this Triton lacks the mode.
"""

from __future__ import annotations

from harness.probe.detectors import Detector
from harness.probe.detectors._triton_sanitizer import SanitizerCheck, tool
from harness.probe.findings import WARNING, Code

P607 = Code("P607", WARNING, "Triton's FpSan (TRITON_INSTRUMENTATION_MODE=fpsan) reported a floating-point exception "
                             "(NaN, Inf) where it arose in the reference detector's run at the small sizes (a warning: "
                             "a masked or later-replaced Inf, as a -inf mask, is not a wrong result)")


# --- its case check (detect, report): how the casebook scores the same idea on its cases ---

class FpSan(SanitizerCheck):
    mode = "fpsan"
    what = "TRITON_INSTRUMENTATION_MODE=fpsan: FpSan: floating-point exceptions (NaN, Inf) where they arise"
    order = 107
    codes = ("P607",)


DETECTOR = Detector("fpsan", "TRITON_INSTRUMENTATION_MODE=fpsan: FpSan", None, backends=("gpu",), process={"gpu": 3},
                    rank=16, tool=tool("fpsan", "P607", WARNING), codes=(P607,), case=(FpSan(),))
