"""``divergence`` (a case check, ``detect``): the kernel's behaviour on the GPU against its behaviour under the
interpreter.

Sizes differ between backends, so the results cannot be compared value by value; what
can be compared is whether each is right, wrong, varies, or dies.
"""

from __future__ import annotations

from harness.core.verdict import Observed
from harness.probe.casecheck import FLAGGED, NA, NOT_RUN, QUIET, AcrossCheck
from harness.probe.detectors import Detector


def behaviour_class(observed: str) -> str:
    """ok / wrong / flaky / crash / hang / ..., from a verdict's observed behaviour."""
    return Observed.parse(observed).kind


class Divergence(AcrossCheck):
    name = "divergence"
    label = "GPU vs interpreter"
    what = "compares the behaviour (ok / wrong / flaky / crash) on the GPU with the interpreter's"
    yours = "run the test suite once with TRITON_INTERPRET=1 and once on the GPU"
    order = 70

    def compare(self, gpu_verdicts: list | None, interp_verdicts: list | None) -> tuple[str, str]:
        """Flagged when a kernel's behaviour class differs between the GPU and the interpreter."""
        if not gpu_verdicts:
            return NOT_RUN, "no GPU run (here or recorded)"
        if not interp_verdicts:
            return NOT_RUN, "no interpreter run"
        parts, same = [], []
        for g, i in zip(gpu_verdicts, interp_verdicts):
            cg, ci = behaviour_class(g["observed"]), behaviour_class(i["observed"])
            if {cg, ci} & {"skip", "error", ""}:
                return NA, f"not run on both backends (gpu {g['observed']}, interpreter {i['observed']})"
            call = f"call {g['call']}: " if len(gpu_verdicts) > 1 else ""
            if cg != ci:
                parts.append(f"{call}GPU {g['observed']}, interpreter {i['observed']}")
            else:
                same.append(f"{call}{cg}")
        if parts:
            return FLAGGED, "; ".join(parts)
        return QUIET, f"same on both: {', '.join(same)}"


# a case check only: the probe compares its backends itself (P205, harness.probe.runner)
DETECTOR = Detector("divergence", "the GPU against the interpreter, from a case's verdicts on both", None,
                    backends=(), rank=20, case=(Divergence(),))
