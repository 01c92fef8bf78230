"""C6xx, interpreter run: under TRITON_INTERPRET=1, as pytest runs it, the case behaves as declared.

These rules read ``CaseFolder.interpreter``, which the engine fills in by running
every runnable case at once (``check --no-run`` skips them).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

from harness.checks.folder import CaseFolder
from harness.checks.problem import ERROR, Violation
from harness.checks.registry import rule


def show(case: CaseFolder) -> str:
    return f"python -m harness case {case.slug} --backend interpreter -v shows the run"


def setup_file(case: CaseFolder, run) -> tuple[str, int | None]:
    """The case file (and line) a setup error's traceback points at."""
    hits = [(Path(f).name, int(n)) for f, n in re.findall(r'File "([^"]+)", line (\d+)', run.output_tail or "")
            if Path(f).parent.resolve() == case.path.resolve()]
    return hits[-1] if hits else (f"{run.variant}.py", None)


def not_as_declared(case: CaseFolder, run) -> list:
    return [v for v in case.interpreter.verdicts if v.variant == run.variant and not v.as_declared]


@rule("C601", "interpreter-setup-failed", ERROR, needs=("run",),
      why="a case that cannot import its files or build its inputs shows nothing about its kernel")
def interpreter_setup_failed(case: CaseFolder) -> Iterator[Violation]:
    """A variant's run failed before its kernel ran (an import error, make_inputs raised ...)."""
    for run in case.interpreter.runs:
        if run.status == "error" and not_as_declared(case, run):
            file, line = setup_file(case, run)
            yield Violation(file, f"the {run.variant} run failed to set up under the interpreter: {run.message}",
                          show(case), line)


def detail(run, v) -> str:
    return f": {run.message}" if v.observed in ("crash", "hang") and run.message else ""


@rule("C602", "interpreter-fixed-not-ok", ERROR, needs=("run",),
      why="the fixed kernel is the lesson's answer: it must match the reference wherever it runs")
def interpreter_fixed_not_ok(case: CaseFolder) -> Iterator[Violation]:
    """Under the interpreter, the fixed kernel (or fast.py's) did not match the reference on every trial."""
    for run in case.interpreter.runs:
        if run.variant == "broken" or run.status == "error":
            continue
        for v in not_as_declared(case, run):
            call = f", call {v.call}," if case.spec.calls > 1 else ""
            yield Violation(f"{run.variant}.py", f"under the interpreter{call} the {run.variant} kernel was "
                          f"{v.observed}{detail(run, v)}, not ok", "it must match the reference on every trial "
                          f"(bitwise alike when deterministic = true); {show(case)}")


@rule("C603", "interpreter-broken-not-as-declared", ERROR, needs=("run",),
      why="[expect] interpreter is what pytest asserts; a case that does something else fails everyone's tests")
def interpreter_broken_not_as_declared(case: CaseFolder) -> Iterator[Violation]:
    """Under the interpreter, the broken kernel did not do what [expect] interpreter declares."""
    for run in case.interpreter.runs:
        if run.variant != "broken" or run.status == "error":
            continue
        for v in not_as_declared(case, run):
            call = f", call {v.call}," if case.spec.calls > 1 else ""
            yield Violation("broken.py", f"under the interpreter{call} the broken kernel was {v.observed}"
                          f"{detail(run, v)}, but case.toml declares {v.expected}",
                          f"make it show the bug, or declare what it does in [expect] interpreter; {show(case)}")


@rule("C604", "interpreter-run-failed", ERROR, needs=("run",),
      why="check must say when it could not run a case, rather than pass it unrun")
def interpreter_run_failed(case: CaseFolder) -> Iterator[Violation]:
    """The harness could not run the case under the interpreter, or could not judge the run."""
    if case.interpreter.error:
        yield Violation(None, f"the interpreter run could not be judged: {case.interpreter.error}",
                      f"python -m harness case {case.slug} --backend interpreter -v")
