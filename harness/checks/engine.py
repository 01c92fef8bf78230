"""Running the rules: every folder read once, run under the interpreter once, each rule applied once.

``check_folders`` is what ``python -m harness check`` calls. A rule that raises is one
more line (C901), never a traceback, and the folder's other rules still run.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from harness.checks.casebook import Casebook
from harness.checks.folder import CaseFolder, InterpreterRun
from harness.checks.problem import Violation, Problem, locate
from harness.checks.registry import CRASHED, Rule
from harness.checks.rules import all_rules
from harness.errors import UsageError, error_line


@dataclass
class CaseReport:
    """One folder's problems, in rule order."""

    folder: CaseFolder
    problems: list[Problem] = field(default_factory=list)

    @property
    def slug(self) -> str:
        return self.folder.slug

    @property
    def prefix(self) -> str:
        return self.folder.prefix

    @property
    def codes(self) -> list[str]:
        return [p.code for p in self.problems]


def problem(rule: Rule, case: CaseFolder, finding: Violation) -> Problem:
    return Problem(rule.code, rule.level, locate(case.prefix, finding), finding.what, finding.fix,
                   finding.file, finding.line)


def apply(rule: Rule, case: CaseFolder) -> list[Problem]:
    """``rule``'s problems in ``case``; none when the folder lacks what it needs."""
    if not rule.applies(case):
        return []
    try:
        return [problem(rule, case, f) for f in rule.check(case)]
    except Exception as e:  # never a traceback: a malformed folder is one more line
        crash = Violation(None, f"the rule {rule.code} ({rule.name}) could not finish: {error_line(e)}",
                        "fix the problems above; if it persists, report it against the harness")
        return [problem(CRASHED, case, crash)]


def run_interpreter(cases: list[CaseFolder], jobs: int) -> None:
    """Run every runnable case under the interpreter, at once, and give each its runs and verdicts."""
    todo = [c for c in cases if c.runnable]
    if not todo:
        return
    from harness.run.scheduler import run_case_matrix  # heavy: only when there is something to run

    print(f"running {len(todo)} case(s) under the interpreter ...", file=sys.stderr, flush=True)
    try:
        results = run_case_matrix([c.spec for c in todo], ["interpreter"], None, 0, jobs=jobs)
    except UsageError:  # a broken environment (torch cannot be imported): bad input for the whole command
        raise
    except Exception as e:
        for c in todo:
            c.interpreter = InterpreterRun([], [], error_line(e))
        return
    for c in todo:
        runs, verdicts = results.get(c.slug, ([], []))
        c.interpreter = InterpreterRun(runs, verdicts, None if runs else "the harness returned no run for it")


def check_case(case: CaseFolder, rules: list[Rule] | None = None) -> CaseReport:
    """Apply every rule (or ``rules``) to one folder; rules needing what it lacks are skipped."""
    return CaseReport(case, [p for r in (all_rules() if rules is None else rules) for p in apply(r, case)])


def check_folders(folders: list[Path], root: Path, *, run: bool = True, jobs: int = 2,
                  rules: list[Rule] | None = None) -> list[CaseReport]:
    """Check each folder under ``root`` (the cases folder, for the cross-case rules); ``run``: the interpreter too.

    Every folder shares one ``Casebook`` of ``root``: the other cases' files are read, and
    each pair of files compared, once for the whole run.
    """
    book = Casebook(root, [f.name for f in folders])
    cases = [CaseFolder(f, root, book) for f in folders]
    if run:
        run_interpreter(cases, jobs)
    return [check_case(c, rules) for c in cases]
