"""``TRITON_DEBUG=1`` around the reference detector at the full sizes (GPU): device asserts and
Triton's integer overflow checks, which need the sizes where offsets grow large.

Its case check, ``triton-debug`` (``detect``), reads this detector's P602 from the probe run on the case
folder (``casecheck.ProbeCheck``): the reference detector at the case's GPU sizes under ``TRITON_DEBUG=1``."""

from __future__ import annotations

from harness.probe.casecheck import ProbeCheck
from harness.probe.detectors import Detector, Tool
from harness.probe.findings import ERROR, Code, Finding
from harness.run.gpu_tools import ASSERTIONS


def how(options: dict) -> dict:
    return {"extra_env": {"TRITON_DEBUG": "1"}, "small": False}


def findings(name: str, backend: str, output: str) -> list:
    for pat in ASSERTIONS:
        if (m := pat.search(output)) is not None:
            return [Finding("P602", name, backend, f"device_assert fired: {m.group(1)}")]
    return []


P602 = Code("P602", ERROR, "a device assertion fired under TRITON_DEBUG=1 (its int32 overflow checks, "
                           "`tl.device_assert`)", ("int32-offset-overflow", "int32-pid-stride-overflow"))


# --- its case checks (detect, report): how the casebook scores the same idea on its cases ---

class TritonDebug(ProbeCheck):
    name = "triton-debug"
    label = "TRITON_DEBUG"
    where = "gpu"
    what = "TRITON_DEBUG=1: compiles tl.device_assert and int32 add/sub/mul overflow checks into the kernel"
    yours = "TRITON_DEBUG=1 python your_test.py (or @triton.jit(debug=True)); GPU only"
    order = 100
    reads = ("triton-debug",)
    codes = ("P602",)

    def not_applicable(self, backend: str) -> str | None:
        if self.applies(backend):
            return None
        return "the interpreter ignores TRITON_DEBUG: device_assert and overflow checks are no-ops"


DETECTOR = Detector("triton-debug", "TRITON_DEBUG=1: device asserts and overflow checks", None, backends=("gpu",),
                    process={"gpu": 2}, rank=12, tool=Tool(how, findings), codes=(P602,),
                    case=(TritonDebug(),))
