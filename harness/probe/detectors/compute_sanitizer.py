"""compute-sanitizer memcheck around the reference detector, at the small sizes (GPU).

Its own log file, guard padding off (padding is valid memory and would hide an access),
``PYTORCH_NO_CUDA_MEMORY_CACHING=1``; given the option ``tool_kernels`` (names), only those kernels are checked
(``--kernel-name kne=...``): PyTorch's run unchecked, and their reports stay out.

Its case checks (``detect``): ``memcheck`` reads this detector's P601 from the probe run on the case folder
(``casecheck.ProbeCheck``; ``detect`` names the kernels the case's main run compiled, as ``tool_kernels``);
``racecheck`` runs the case's worker under compute-sanitizer's racecheck, one trial at small sizes, the
case's own kernels only. compute-sanitizer writes its report to a log file, whose start (the first report)
and end (the summary) is put in front of the run's output.
"""

from __future__ import annotations

from harness.probe.casecheck import (FLAGGED, NA, NOT_RUN, QUIET, CaseCheck, Evidence, ProbeCheck, count,
                                    no_result, no_shared_memory, short, small_sizes)
from harness.probe.detectors import Detector, Tool
from harness.probe.findings import ERROR, Code, Finding
from harness.run.gpu_tools import (NOT_FOUND, compute_sanitizer, in_case_kernels, kernel_filter,
                                   sanitizer_summary, wrapper)


def how(options: dict) -> dict | None:
    cs = compute_sanitizer()
    if cs is None:
        return None
    only = kernel_filter(cs, [{"name": n} for n in options.get("tool_kernels") or []])
    return {"wrapper": with_filter(wrapper(cs, "memcheck"), only), "extra_env": {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"},
            "log_file": True, "small": True}


def findings(name: str, backend: str, output: str) -> list:
    s = sanitizer_summary(output)
    if s and s["errors"]:
        first = f"; first: {s['first']}" if s["first"] else ""
        return [Finding("P601", name, backend, f"{s['errors']} errors{first}"[:300])]
    return []


P601 = Code("P601", ERROR, "compute-sanitizer (memcheck) reported errors in the reference detector's run at the "
                           "small sizes")


def with_filter(command: list, only: list) -> list:
    """compute-sanitizer's command line with ``only`` (``kernel_filter``'s options) after the binary."""
    return command[:1] + only + command[1:]


# --- its case checks (detect, report): how the casebook scores the same idea on its cases ---

class Racecheck(CaseCheck):
    """compute-sanitizer's racecheck: the case's worker under it, one trial at the interpreter's sizes."""

    name = label = tool = "racecheck"
    where = "gpu"
    what = "compute-sanitizer --tool racecheck: shared-memory hazards only, not global memory"
    yours = "compute-sanitizer --tool racecheck python your_test.py"
    order = 90

    def sizes(self, spec, backend: str) -> dict:
        """The interpreter's, the smallest the case has (a hazard lies within one program, and racecheck
        tracks every shared access: at 8,200 keys an attention kernel outlives its timeout)."""
        return spec.sizes.get("interpreter") or small_sizes(spec, backend)

    def extra_run(self, spec, backend: str) -> dict | str:
        cs = compute_sanitizer()
        if cs is None:
            return NOT_FOUND
        return {"trials": 1, "wrapper": wrapper(cs, self.tool),
                "extra_env": {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}, "log_file": True,
                "overrides": {"pad": 0, "sizes": self.sizes(spec, backend), "calls": spec.calls}}

    def refine(self, plan: dict, run) -> dict | str:
        """Only the kernels the main run compiled are checked (``kernel_filter``); nothing to check where
        they use no shared memory."""
        if (why := no_shared_memory(run, self.name)) is not None:
            return why
        plan["wrapper"] = with_filter(plan["wrapper"], kernel_filter(plan["wrapper"][0], run.kernels))
        return plan

    def check(self, ev: Evidence) -> tuple[str, str]:
        run = ev.extra.get(self.name)
        if run is None or isinstance(run, str):
            return no_result(run, f"{self.tool} run")
        if run.status == "skip":
            return NA, f"not run on this backend: {run.message}"
        if run.status == "error":
            return NOT_RUN, f"the case failed to set up under compute-sanitizer: {run.message}"
        s = sanitizer_summary(run.output_tail)
        if s is None:
            if run.status == "hang":
                return NOT_RUN, f"compute-sanitizer {self.tool}: {run.message}"
            return NOT_RUN, f"compute-sanitizer printed no ERROR SUMMARY ({run.status}: {run.message or 'no message'})"
        if s["errors"]:
            kernels = getattr(ev.run, "kernels", None) if ev.run is not None else None
            if s["reports"] and not in_case_kernels(s["reports"], kernels):
                return QUIET, short(f"0 errors in the case's kernels ({count(s['errors'], 'error')} in "
                                    f"PyTorch's own: {s['first']})")
            first = f"; first: {s['first']}" if s["first"] else ""
            return FLAGGED, f"{count(s['errors'], 'error')}{first}"
        extra = f", {s['warnings']} warnings" if s["warnings"] else ""
        crashed = f" (the run ended in {run.status}: {run.message})" if run.status != "done" else ""
        return QUIET, f"0 errors{extra}{crashed}"


class Memcheck(ProbeCheck):
    """The probe's compute-sanitizer detector (memcheck around its reference detector, at the small sizes),
    run on the case folder: the case's own kernels only (``detect`` passes the main run's as ``tool_kernels``)."""

    name = label = "memcheck"
    where = "gpu"
    what = "compute-sanitizer --tool memcheck, guard padding off and PYTORCH_NO_CUDA_MEMORY_CACHING=1"
    yours = "PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python your_test.py"
    order = 80
    reads = ("compute-sanitizer",)
    codes = ("P601",)


MEMCHECK = Memcheck()
RACECHECK = Racecheck()


DETECTOR = Detector("compute-sanitizer", "compute-sanitizer memcheck, no caching allocator", None, backends=("gpu",),
                    process={"gpu": 1}, rank=11, tool=Tool(how, findings), codes=(P601,),
                    case=(MEMCHECK, RACECHECK))
