"""What Triton's own sanitizers share (``TRITON_INSTRUMENTATION_MODE=<mode>``, GPU): one detector each, a tool around
the reference detector (``consan``, ``gsan``, ``fpsan``, ``iisan``, each module's ``DETECTOR``):

- ``consan`` (ConSan): hazards between asynchronous operations on shared and tensor
  memory (TMA, wgmma, barriers) in one program;
- ``gsan`` (GSan): races on global memory between programs;
- ``fpsan`` (FpSan): floating-point exceptions (NaN, Inf) as they arise;
- ``iisan`` (IISan): integer overflow and out-of-range index arithmetic.

Which modes exist depends on the installed Triton (``triton_compat.instrumentation_modes`` reads the NVIDIA
backend); a mode this Triton lacks is skipped (``Tool.how`` says why), and its case check is n/a with the
version named. A sanitizer reports by a device-side assertion, which ends the process: its run is the reference
detector once at the small sizes (``SMALL_SIZES``, else a case folder's ``[sizes.sanitizer]``, then
``[sizes.interpreter]``), and the finding quotes the assertion. The worker gives Triton a global-scratch
allocator where the mode is set (the instrumented kernels keep their state there).

Not a plugin (the registry loads the four modules that use it).
"""

from __future__ import annotations

import re

from harness.probe.casecheck import NA, Evidence, ProbeCheck, short
from harness.probe.detectors import Tool
from harness.probe.findings import Finding

_REPORT = [re.compile(p) for p in (r"Assertion `([^`]*)` failed", r"((?:ConSan|GSan|FpSan|IISan)[^\n]*)",
                                   r"(device-side assert triggered)")]
LABELS = {"consan": "ConSan", "gsan": "GSan", "fpsan": "FpSan", "iisan": "IISan"}


def triton_version() -> str:
    try:
        import triton

        return triton.__version__
    except Exception:  # no Triton at all: the caller's message says so
        return "?"


def lacks(mode: str) -> str | None:
    """Why ``mode`` does not apply here (this Triton's NVIDIA backend has no such mode), or None."""
    from harness.run.triton_compat import instrumentation_modes

    if mode in instrumentation_modes():
        return None
    return f"not available with triton {triton_version()} (its NVIDIA backend has no {mode})"


def tool(mode: str, code: str, severity: str) -> Tool:
    """The tool of ``mode``: the reference detector at the small sizes under ``TRITON_INSTRUMENTATION_MODE=mode``;
    ``code`` (of ``severity``) where its output holds the sanitizer's report (a device-side assertion)."""

    def how(options: dict) -> dict | str:
        if (why := lacks(mode)) is not None:
            return why
        return {"extra_env": {"TRITON_INSTRUMENTATION_MODE": mode}, "small": True}

    def findings(name: str, backend: str, output: str) -> list:
        for pat in _REPORT:
            if (m := pat.search(output)) is not None:
                return [Finding(code, name, backend, f"{LABELS[mode]} reported: {short(m.group(1), 120)}",
                                severity=severity)]
        return []

    return Tool(how, findings)


class SanitizerCheck(ProbeCheck):
    """The case check of one sanitizer: it reads its detector's code from the probe run on the case folder (the
    mode is the detector's name and the check's); a mode this Triton lacks (the probe skipped it) is n/a."""

    where = "gpu"
    mode = ""

    def __init__(self):
        self.name = self.mode
        self.label = LABELS[self.mode]
        self.yours = f"TRITON_INSTRUMENTATION_MODE={self.mode} python your_test.py (with triton.set_allocator); " \
                     f"GPU only"
        self.reads = (self.mode,)

    def check(self, ev: Evidence) -> tuple[str, str]:
        p = ev.probe
        ran = p.get("ran", {}).get(self.mode, "") if isinstance(p, dict) else ""
        if ran.startswith("skipped: "):  # the tool does not apply here (this Triton has no such mode)
            return NA, ran.removeprefix("skipped: ")
        return super().check(ev)
