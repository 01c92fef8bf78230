"""``triton-debug``: one trial with ``TRITON_DEBUG=1`` at the GPU sizes (the interpreter ignores it)."""

from __future__ import annotations

import re

from harness.detectors.base import FLAGGED, NOT_RUN, QUIET, Detector, Evidence, no_result

_ASSERT = [re.compile(p) for p in (r"Assertion `([^`]*)` failed", r"(int\d+ overflow detected for operation \w+)",
                                   r"(device-side assert triggered)")]


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
        run = ev.extra.get(self.name)
        if run is None or isinstance(run, str):
            return no_result(run, "TRITON_DEBUG=1 run")
        if run.status in ("skip", "error"):
            return no_result(run)
        text = run.output_tail + "\n" + run.message
        for pat in _ASSERT:
            if (m := pat.search(text)) is not None:
                return FLAGGED, f"device_assert fired: {m.group(1)}"
        if run.status == "done":
            return QUIET, "no device_assert or overflow check fired"
        main = ev.run if ev.run is not None and not isinstance(ev.run, str) else None
        if main is not None and main.status == run.status:
            return QUIET, f"no assertion fired (without TRITON_DEBUG the run ends in {run.status} too)"
        return NOT_RUN, f"the TRITON_DEBUG=1 run ended in {run.status} without an assertion: {run.message}"


DETECTORS = (TritonDebug(),)
