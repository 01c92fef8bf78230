"""C8xx, copies between cases: a kernel file copied from another case stays an exact copy.

Cases stand alone, so one kernel may live in several of them (the five nrm2 cases share
case.py). Where two files are meant to be the same they are byte-identical; a copy that
drifted by a line or two is the bug-fix that reached one case and not the other. The
comparison is ``harness.core.lessons.near_copies``; the other cases' files come from the
``Casebook`` that every folder of one ``check`` run shares, so each pair is compared once.
"""

from __future__ import annotations

from typing import Iterator

from harness.checks.folder import CaseFolder
from harness.checks.problem import WARNING, Violation
from harness.checks.registry import rule


@rule("C801", "near-copy", WARNING,
      why="a file copied between cases is meant to be the same code; one that drifted carries a change that "
          "reached one case and not the other")
def near_copy(case: CaseFolder) -> Iterator[Violation]:
    """A Python file of the case is almost, but not exactly, the same as a file of another case (a few lines
    differ, markers, blank lines and the __main__ footer aside)."""
    own = {name: case.text[name] for name in case.python_files if name in case.text}
    for name, other, line, found in case.casebook.near_copies(case.slug, own):
        yield Violation(name, f"is a near-copy of {other}: {found.differing} line(s) differ, "
                            f"{found.ratio:.0%} alike", f"if they are meant to be the same, make them "
                      f"byte-identical (cp cases/{other} ...); if not, say in the docstring what differs", line)
