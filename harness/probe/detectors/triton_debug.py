"""``TRITON_DEBUG=1`` around the reference detector at the full sizes (GPU): device asserts and
Triton's integer overflow checks, which need the sizes where offsets grow large."""

from __future__ import annotations

from harness.probe.detectors import Detector, Tool
from harness.probe.findings import ERROR, Code, Finding


def how() -> dict:
    return {"extra_env": {"TRITON_DEBUG": "1"}, "small": False}


def findings(name: str, backend: str, output: str) -> list:
    from harness.run.gpu_tools import ASSERTIONS

    for pat in ASSERTIONS:
        if (m := pat.search(output)) is not None:
            return [Finding("P602", name, backend, f"device_assert fired: {m.group(1)}")]
    return []


P602 = Code("P602", ERROR, "a device assertion fired under TRITON_DEBUG=1 (its int32 overflow checks, "
                           "`tl.device_assert`)", ("int32-offset-overflow", "int32-pid-stride-overflow"))


DETECTOR = Detector("triton-debug", "TRITON_DEBUG=1: device asserts and overflow checks", None, backends=("gpu",),
                    process={"gpu": 2}, rank=12, tool=Tool(how, findings), codes=(P602,))
