"""``TRITON_INSTRUMENTATION_MODE=gsan`` (GSan) around the reference detector at the small sizes (GPU): races on
global memory between programs.

One of Triton's own sanitizers, compiled into the kernel (``_triton_sanitizer``: what the four share); a Triton
without the mode skips it. Opt-in (``--tools``), as the GPU's other tools.

Its case check, ``gsan`` (``detect``), reads this detector's P606 from the probe run on the case folder
(``casecheck.ProbeCheck``); n/a where this Triton lacks the mode.
"""

from __future__ import annotations

from harness.probe.detectors import Detector
from harness.probe.detectors._triton_sanitizer import SanitizerCheck, tool
from harness.probe.findings import WARNING, Code

P606 = Code("P606", WARNING, "Triton's GSan (TRITON_INSTRUMENTATION_MODE=gsan) reported a race on global memory between"
                             " programs in the reference detector's run at the small sizes (a warning: programs that "
                             "store the same value race harmlessly)")


# --- its case check (detect, report): how the casebook scores the same idea on its cases ---

class GSan(SanitizerCheck):
    mode = "gsan"
    what = "TRITON_INSTRUMENTATION_MODE=gsan: GSan: races on global memory between programs"
    order = 106
    codes = ("P606",)


DETECTOR = Detector("gsan", "TRITON_INSTRUMENTATION_MODE=gsan: GSan", None, backends=("gpu",), process={"gpu": 3},
                    rank=15, tool=tool("gsan", "P606", WARNING), codes=(P606,), case=(GSan(),))
