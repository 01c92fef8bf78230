"""The GPU tools the harness runs a worker under, shared by the probe's detectors (``probe.detectors.compute_sanitizer``,
``racecheck``, ``triton_debug``: their probe runs and their case checks) and
``sanitize --backend gpu``: NVIDIA's compute-sanitizer (where it is, its command line, its summary) and
what a fired ``device_assert`` or TRITON_DEBUG overflow check prints."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess

# what a fired device_assert or overflow check prints (TRITON_DEBUG=1 runs)
ASSERTIONS = [re.compile(p) for p in (r"Assertion `([^`]*)` failed", r"(int\d+ overflow detected for operation \w+)",
                                      r"(device-side assert triggered)")]
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


def with_filter(command: list, only: list) -> list:
    """compute-sanitizer's command line with ``only`` (``kernel_filter``'s options) after the binary."""
    return command[:1] + only + command[1:]


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
