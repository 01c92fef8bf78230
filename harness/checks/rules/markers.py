"""C4xx, markers: no TODO left; '# BUG:' marks the faulty lines of broken.py, '# FIX:' the changed ones of fixed.py.

C407 to C411 report what ``harness.core.lessons.marker_problems`` finds, from the diff
between broken.py and fixed.py (docstring, footer and markers left out): a '# BUG:' on a
line the fix keeps, a '# FIX' without a reason or on a line the fix keeps, a change
with no '# FIX:', a deletion with no '# BUG:'. '# NOTE:' marks context and is never
one of them.
"""

from __future__ import annotations

import re
from typing import Iterator

from harness.checks.folder import CaseFolder
from harness.checks.problem import ERROR, WARNING, Violation
from harness.checks.registry import rule
from harness.core import lessons

MARKER_RE = re.compile(r"#\s*(BUG|FIX)\b:?\s*(.*)")
TODO_RE = re.compile(r"\bTODO\b")
TODO_HINTS = {
    "case.toml": "put in the real value and delete the TODO",
    "case.py": "say what the inputs are and delete the TODO",
    "broken.py": "tell the story and end each faulty line with '# BUG: why'",
    "fixed.py": "say what the fix changes and end each changed line with '# FIX: why'",
    "fast.py": "say what makes it fast and delete the TODO",
}
OWN = {"broken.py": ("BUG", "fixed.py"), "fixed.py": ("FIX", "broken.py")}  # file -> (its marker, the other file)


def todo_fix(case: CaseFolder, name: str, line: int) -> str:
    if name != "README.md":
        return TODO_HINTS.get(name, "finish it and delete the TODO")
    h = case.readme.section_at(line) if case.readme else None
    return f"write the section '{h.markup}'" if h else "write the title, as in case.toml, and the opening paragraph"


@rule("C401", "todo-left", ERROR,
      why="the scaffold from 'harness new' marks everything still to write with TODO; a finished case has none")
def todo_left(case: CaseFolder) -> Iterator[Violation]:
    """A file still says TODO."""
    for name, text in case.text.items():
        for i, line in enumerate(text.splitlines(), 1):
            m = TODO_RE.search(line)
            if m:
                snippet = line[m.start():].strip().rstrip("\"'")
                snippet = snippet if len(snippet) <= 60 else snippet[:57] + "..."
                yield Violation(name, f"still says '{snippet}'", todo_fix(case, name, i), i)


def markers(case: CaseFolder, name: str) -> Iterator[tuple[int, str, str, str]]:
    """(line, code before the comment, BUG or FIX, the reason) for each marker comment in ``name``."""
    for line, (code, comment) in sorted(case.comments[name].items()):
        m = MARKER_RE.match(comment)
        if m:
            yield line, code, m.group(1), m.group(2)


def marker_missing(case: CaseFolder, name: str) -> Iterator[Violation]:
    want = OWN[name][0]
    if not any(kind == want for _, _, kind, _ in markers(case, name)):
        what = "faulty line with '# BUG: why'" if want == "BUG" else "changed line with '# FIX: why'"
        yield Violation(name, f"no '# {want}:' marker", f"end each {what}")


@rule("C402", "bug-marker-missing", ERROR, needs=("broken.py",),
      why="the report and the reader find the fault by its marker; a broken.py without one hides it")
def bug_marker_missing(case: CaseFolder) -> Iterator[Violation]:
    """broken.py has no '# BUG:' marker."""
    yield from marker_missing(case, "broken.py")


@rule("C403", "fix-marker-missing", ERROR, needs=("fixed.py",),
      why="the marker shows which lines the fix changes, and why")
def fix_marker_missing(case: CaseFolder) -> Iterator[Violation]:
    """fixed.py has no '# FIX:' marker."""
    yield from marker_missing(case, "fixed.py")


@rule("C404", "marker-without-code", ERROR,
      why="a marker is about the line it ends; on a line of its own it points at nothing")
def marker_without_code(case: CaseFolder) -> Iterator[Violation]:
    """A '# BUG:' or '# FIX:' marker stands on a line with no code."""
    for name, (want, _) in OWN.items():
        for line, code, kind, _ in markers(case, name) if name in case.trees else ():
            if kind == want and not code:
                yield Violation(name, f"the '# {want}:' marker is on a line with no code",
                              "put it at the end of the line it is about", line)


@rule("C405", "marker-wrong-file", ERROR,
      why="'# BUG:' in fixed.py (or '# FIX:' in broken.py) is almost always a copy left over from the other file")
def marker_wrong_file(case: CaseFolder) -> Iterator[Violation]:
    """broken.py has a '# FIX:' marker, or fixed.py a '# BUG:' one."""
    for name, (want, other) in OWN.items():
        for line, _, kind, _ in markers(case, name) if name in case.trees else ():
            if kind != want:
                yield Violation(name, f"a '# {kind}:' marker in {name}",
                              f"mark lines '# {want}: why' here; '# {kind}:' belongs in {other}", line)


@rule("C406", "bug-marker-without-reason", WARNING, needs=("broken.py",),
      why="the reason is the lesson: '# BUG:' alone says where, not what goes wrong")
def bug_marker_without_reason(case: CaseFolder) -> Iterator[Violation]:
    """A '# BUG' marker gives no reason after it."""
    for line, _, kind, why in markers(case, "broken.py"):
        if kind == "BUG" and not why.strip():
            yield Violation("broken.py", "the '# BUG' marker gives no reason", "write '# BUG: why'", line)


def lesson_findings(case: CaseFolder, kind: str) -> Iterator[Violation]:
    """The problems of one kind that ``lessons.marker_problems`` finds, as findings."""
    for p in case.marker_problems:
        if p.rule == kind:
            yield Violation(p.file, p.what, p.fix, p.line)


@rule("C407", "fix-line-unchanged", WARNING, needs=("broken.py", "fixed.py"),
      why="a '# FIX:' marker belongs on a line the fix changed; on an unchanged line it misleads")
def fix_line_unchanged(case: CaseFolder) -> Iterator[Violation]:
    """A line marked '# FIX:' is one the fix keeps unchanged from broken.py (its code, markers cut, lines up
    with broken.py's in the diff)."""
    yield from lesson_findings(case, "fix-on-kept-line")


def beside_insertions(case: CaseFolder) -> set[int]:
    """broken.py's lines within two of where the fix adds lines, when all the fix does is add lines.

    Such a fix changes and deletes nothing, so no line of broken.py is one it changes;
    the '# BUG:' then marks the line where things go wrong, which the diff shows as
    context (two lines each side, as ``snippets`` draws it).
    """
    a, _, ops = lessons.align(case.text["broken.py"], case.text["fixed.py"])
    changed = [op for op in ops if op[0] != "equal"]
    if not changed or any(tag != "insert" and any(t.strip() for _, t in a[i1:i2]) for tag, i1, i2, _, _ in changed):
        return set()
    return {a[i][0] for _, i1, _, _, _ in changed for i in range(max(i1 - 2, 0), min(i1 + 2, len(a)))}


@rule("C408", "bug-on-kept-line", ERROR, needs=("broken.py", "fixed.py"),
      why="the '# BUG:' lines are the lesson's 'before': the reader looks for them in the diff, "
          "so they must be lines the fix changes; context belongs in a '# NOTE:'")
def bug_on_kept_line(case: CaseFolder) -> Iterator[Violation]:
    """A '# BUG:' marks a line that fixed.py keeps unchanged (a fix that only adds lines may have it on a line
    next to where it adds them)."""
    allowed = beside_insertions(case)
    yield from (f for f in lesson_findings(case, "bug-on-kept-line") if f.line not in allowed)


@rule("C409", "fix-without-reason", ERROR, needs=("broken.py", "fixed.py"),
      why="the reason is the lesson: '# FIX' alone says where, not why the change is enough")
def fix_without_reason(case: CaseFolder) -> Iterator[Violation]:
    """A '# FIX' marker gives no reason after it (nothing, or only punctuation)."""
    yield from lesson_findings(case, "fix-without-reason")


@rule("C410", "change-without-fix", ERROR, needs=("broken.py", "fixed.py"),
      why="every place the fix changes is part of the lesson; an unmarked change is one the reader cannot tell "
          "from the point")
def change_without_fix(case: CaseFolder) -> Iterator[Violation]:
    """Lines of fixed.py differ from broken.py, and none of them carries a '# FIX:' marker (where fixed.py has
    none at all, C403 says so instead)."""
    if any(kind == "FIX" for _, _, kind, _ in markers(case, "fixed.py")):
        yield from lesson_findings(case, "change-without-fix")


@rule("C411", "deletion-without-bug", ERROR, needs=("broken.py", "fixed.py"),
      why="what the fix deletes was part of the bug; without a '# BUG:' there, the diff shows a removal no "
          "marker explains")
def deletion_without_bug(case: CaseFolder) -> Iterator[Violation]:
    """The fix deletes lines of broken.py, and none of them carries a '# BUG:' marker (where broken.py has none
    at all, C402 says so instead)."""
    if any(kind == "BUG" for _, _, kind, _ in markers(case, "broken.py")):
        yield from lesson_findings(case, "deletion-without-bug")
