"""``triton-debug``: one trial with ``TRITON_DEBUG=1`` at the GPU sizes (the interpreter ignores it)."""

from __future__ import annotations

from harness.detectors.base import Detector, Evidence, assertion_finding
from harness.run.gpu_tools import ASSERTIONS


class TritonDebug(Detector):
    name = "triton-debug"
    label = "TRITON_DEBUG"
    where = "gpu"
    what = "TRITON_DEBUG=1: compiles tl.device_assert and int32 add/sub/mul overflow checks into the kernel"
    yours = "TRITON_DEBUG=1 python your_test.py (or @triton.jit(debug=True)); GPU only"
    order = 100

    def not_applicable(self, backend: str) -> str | None:
        if self.applies(backend):
            return None
        return "the interpreter ignores TRITON_DEBUG: device_assert and overflow checks are no-ops"

    def extra_run(self, spec, backend: str) -> dict:
        return {"trials": 1, "extra_env": {"TRITON_DEBUG": "1"}}

    def check(self, ev: Evidence) -> tuple[str, str]:
        return assertion_finding(ev, self.name, ASSERTIONS, fired="device_assert fired: {0}",
                                 silent="no device_assert or overflow check fired", what="TRITON_DEBUG=1")

DETECTORS = (TritonDebug(),)
