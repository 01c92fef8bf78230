"""``memcheck`` and ``racecheck``: the worker under NVIDIA's compute-sanitizer (GPU).

One trial at small sizes, guard padding off (padding is valid memory, so it would hide
an out-of-bounds access from memcheck) and ``PYTORCH_NO_CUDA_MEMORY_CACHING=1`` (so
every tensor is its own allocation and the caching allocator hides nothing). Only the
case's own kernels are checked, by name (``--kernel-name kne=...``, the names the main run
compiled): PyTorch's kernels run unchecked, and their reports stay out.
compute-sanitizer writes its report to a log file, whose start (the first report) and
end (the summary) the session puts in front of the run's output.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess

from harness.detectors.base import (FLAGGED, NA, NOT_RUN, QUIET, Detector, Evidence, count, no_result,
                                   no_shared_memory, short, small_sizes)

NOT_FOUND = "not run: compute-sanitizer not found (put it on PATH or set CUDA_HOME)"
_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?\b(?! were not printed)")
_HAZARDS = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
_FIRST = re.compile(r"=+\s+((?:Invalid|Race|Error|Warning|Out-of-range|Misaligned|Malformed|Uninitialized)"
                    r"[^\n]*)(?:\n=+\s+at ([^\n]*))?")


def compute_sanitizer() -> str | None:
    """The compute-sanitizer binary: on PATH, under $CUDA_HOME, or in /usr/local/cuda."""
    cands = [shutil.which("compute-sanitizer")]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            cands.append(os.path.join(os.environ[var], "bin", "compute-sanitizer"))
    cands.append("/usr/local/cuda/bin/compute-sanitizer")
    return next((c for c in cands if c and os.access(c, os.X_OK)), None)


@functools.lru_cache(maxsize=None)
def filters_kernels(cs: str) -> bool:
    """Whether this compute-sanitizer takes ``--kernel-name kne=NAME`` (2022 and later do)."""
    try:
        out = subprocess.run([cs, "--help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--kernel-name" in out.stdout and "kernel_name, kne" in out.stdout


def kernel_filter(cs: str, kernels: list | None) -> list[str]:
    """compute-sanitizer options that check only the case's own kernels (by their exact names,
    from the main run): PyTorch's kernels (the inputs, the reference, the comparison) then run
    uninstrumented, which is faster and keeps their reports out. None known: no filter."""
    names = sorted({k["name"] for k in kernels or [] if k.get("name") and k["name"] != "?"})
    if not names or not filters_kernels(cs):
        return []
    return [arg for n in names for arg in ("--kernel-name", f"kne={n}")]


def wrapper(cs: str, tool: str) -> list[str]:
    """The compute-sanitizer command line a worker runs under (the probe's GPU tool too):
    errors exit 99, at most 10 reports, CUDA API errors left out (PyTorch and Triton probe
    the driver on purpose)."""
    return [cs, "--tool", tool, "--error-exitcode", "99", "--print-limit", "10", "--report-api-errors", "no"]


def sanitizer_summary(output: str) -> dict | None:
    """compute-sanitizer's verdict from its output: error count, hazards, first report."""
    counts = [int(m.group(1)) for m in _SUMMARY.finditer(output)]
    if not counts:  # racecheck prints its own summary line instead
        counts = [int(m.group(2)) for m in _HAZARDS.finditer(output)]
    if not counts:
        return None
    out = {"errors": max(counts), "warnings": 0, "first": ""}
    if (h := _HAZARDS.search(output)) is not None:
        out["warnings"] = int(h.group(3))
    reports = []
    for m in _FIRST.finditer(output):
        where = re.sub(r"(?<![\w.])/\S*/", "", m.group(2) or "").strip()  # paths to file names
        reports.append(m.group(1).strip() + (f" at {where}" if where else ""))
    out["first"] = reports[0] if reports else ""
    out["reports"] = reports
    return out


_TORCH = re.compile(r"\b(?:at|c10)::")  # PyTorch's own kernels (the reference, the comparison)


def in_case_kernels(reports: list[str], kernels: list | None) -> list[str]:
    """The reports that concern the case's own kernels: those naming one of its compiled kernels
    (when the main run listed them), else those not in PyTorch's own kernels."""
    names = [k.get("name") for k in kernels or [] if k.get("name")]
    if names:
        return [r for r in reports if any(n in r for n in names)]
    return [r for r in reports if not _TORCH.search(r)]


class Sanitizer(Detector):
    """compute-sanitizer with one of its tools; the tool is the detector's name."""

    where = "gpu"

    def __init__(self, tool: str, what: str, yours: str, order: int, shared_only: bool = False):
        self.name = self.label = self.tool = tool
        self.shared_only = shared_only  # n/a, without a run, when the main run's kernels use no shared memory
        self.what, self.yours, self.order = what, yours, order

    def sizes(self, spec, backend: str) -> dict:
        """memcheck: the case's small sizes (big enough for separate allocations). A shared-memory
        tool: the interpreter's, the smallest the case has (a hazard lies within one program, and
        racecheck tracks every shared access: at 8,200 keys an attention kernel outlives its timeout)."""
        if self.shared_only and spec.sizes.get("interpreter"):
            return spec.sizes["interpreter"]
        return small_sizes(spec, backend)

    def extra_run(self, spec, backend: str) -> dict | str:
        cs = compute_sanitizer()
        if cs is None:
            return NOT_FOUND
        return {"trials": 1, "wrapper": wrapper(cs, self.tool),
                "extra_env": {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}, "log_file": True,
                "overrides": {"pad": 0, "sizes": self.sizes(spec, backend), "calls": spec.calls}}

    def refine(self, plan: dict, run) -> dict | str:
        """Only the kernels the main run compiled are checked (``kernel_filter``); a shared-memory
        tool has nothing to check where they use none."""
        if self.shared_only and (why := no_shared_memory(run, self.name)) is not None:
            return why
        plan["wrapper"] = plan["wrapper"][:1] + kernel_filter(plan["wrapper"][0], run.kernels) + plan["wrapper"][1:]
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


DETECTORS = (
    Sanitizer("memcheck", "compute-sanitizer --tool memcheck, guard padding off and PYTORCH_NO_CUDA_MEMORY_CACHING=1",
              "PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python your_test.py", 80),
    Sanitizer("racecheck", "compute-sanitizer --tool racecheck: shared-memory hazards only, not global memory",
              "compute-sanitizer --tool racecheck python your_test.py", 90, shared_only=True),
)
