"""C5xx, records: the recorded GPU run is there, as declared, newer than the code, and in the write-up."""

from __future__ import annotations

import re
from typing import Iterator

from harness.checks.folder import CaseFolder
from harness.checks.history import last_change, parse_date, when
from harness.checks.problem import ERROR, WARNING, Violation
from harness.checks.registry import rule
from harness.core.recorded import marker

RECORD = "recorded/gpu.json"
CODE_FILES = ("case.py", "broken.py", "fixed.py", "fast.py")  # a recorded run is stale once any changed after it


def record_how(case: CaseFolder) -> str:
    return f"on a machine with a GPU: python -m harness record {case.slug} --backend gpu, then commit recorded/"


def gpu_declared(case: CaseFolder) -> bool:
    """Whether the case runs on a GPU at all ([expect] gpu is not 'skip')."""
    return case.spec.expect["gpu"][0] != "skip"


@rule("C501", "gpu-run-missing", WARNING, needs=("spec",),
      why="the GPU is where the trap bites; a case is finished when a GPU run confirms what it declares")
def gpu_run_missing(case: CaseFolder) -> Iterator[Violation]:
    """There is no recorded GPU run (recorded/gpu.json), though [expect] gpu is not 'skip'."""
    if gpu_declared(case) and case.gpu_record is None:
        yield Violation(RECORD, "no recorded GPU run", record_how(case))


@rule("C502", "gpu-run-unreadable", ERROR, needs=("spec",),
      why="the report and check read the recorded verdicts from it")
def gpu_run_unreadable(case: CaseFolder) -> Iterator[Violation]:
    """recorded/gpu.json is not the JSON that 'harness record' writes."""
    rec = case.gpu_record
    if gpu_declared(case) and rec is not None and rec.error:
        yield Violation(RECORD, f"cannot be read: {rec.error}", f"record it again: {record_how(case)}")


@rule("C503", "gpu-run-not-as-declared", ERROR, needs=("spec",),
      why="the casebook publishes what a kernel does; a recorded run that contradicts case.toml is a wrong claim")
def gpu_run_not_as_declared(case: CaseFolder) -> Iterator[Violation]:
    """The recorded GPU run shows a kernel that did not behave as case.toml declares."""
    rec = case.gpu_record
    for v in rec.not_as_declared if gpu_declared(case) and rec is not None else ():
        yield Violation(RECORD, f"the recorded GPU run of {v.get('variant')} was {v.get('observed')}, but the case "
                      f"declares {v.get('expected')}", f"fix the case or its [expect] gpu, then {record_how(case)}")


@rule("C504", "gpu-run-stale", WARNING, needs=("spec",),
      why="a run recorded before the code last changed no longer shows what the code does")
def gpu_run_stale(case: CaseFolder) -> Iterator[Violation]:
    """The recorded GPU run is older than the last change to case.py, broken.py, fixed.py or fast.py (their
    last commit, or their modification time when they have uncommitted changes)."""
    rec = case.gpu_record
    if not gpu_declared(case) or rec is None or rec.error:
        return
    rec_time, rec_git = last_change(case.path / RECORD)
    dates = [parse_date(d) for d in rec.dates]
    ran = min(dates) if dates and None not in dates else None  # when the run started, to the minute
    for f in CODE_FILES:
        if not (case.path / f).is_file():
            continue
        t, git = last_change(case.path / f)
        newer = t > rec_time if git and rec_git else t > (ran + 60 if ran is not None else rec_time)
        if newer:
            yield Violation(RECORD, f"the recorded GPU run ({when(ran or rec_time)}) is older than the last change "
                          f"to {f} ({when(t)})", f"record it again: {record_how(case)}")


@rule("C505", "recorded-block-empty", WARNING, needs=("spec", "readme"),
      why="the write-up shows the measured tables; an empty block means the run was never recorded into it")
def recorded_block_empty(case: CaseFolder) -> Iterator[Violation]:
    """A recorded: block of the write-up is still empty: the interpreter's always, the GPU's once
    recorded/gpu.json exists."""
    text = case.readme.text
    blocks = ("gpu", "interpreter") if gpu_declared(case) and case.gpu_record is not None else ("interpreter",)
    for backend in blocks:
        start, end = marker(backend)
        m = re.search(re.escape(start) + "(.*?)" + re.escape(end), text, re.S)
        if m and not m.group(1).strip():
            how = f"python -m harness record {case.slug} --backend {backend}"
            yield Violation("README.md", f"the recorded:{backend} block is empty",
                          f"{how} (on a machine with a GPU)" if backend == "gpu" else how,
                          text[:m.start()].count("\n") + 1)
