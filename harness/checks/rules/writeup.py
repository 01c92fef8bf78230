"""C3xx, write-up: README.md has the template's sections, filled in, and agrees with case.toml."""

from __future__ import annotations

import re
from typing import Iterator

from harness.checks.folder import CaseFolder
from harness.checks.problem import ERROR, WARNING, Violation
from harness.checks.registry import rule
from harness.core import lessons, snippets
from harness.core.recorded import marker
from harness.core.spec import BEHAVIOURS

# The write-up's headings, in order, and those that must hold text of their own.
SECTIONS = ("## What you would write", "## What happens", "### On a GPU", "### Under the interpreter",
            "## Why", "## The fix", "## How to catch it", "## Performance", "## Seen in the wild")
NEED_TEXT = {
    "## What you would write": "show the natural-looking code, as a ```python block",
    "## Why": "explain the mechanism",
    "## The fix": "one sentence, then the minimal diff as a ```diff block",
    "## How to catch it": "say which check showed it and which test would catch it",
    "## Seen in the wild": "link real occurrences: Triton issues, other projects' fixes",
}
MARKER_PLACES = {"gpu": "'### On a GPU'", "interpreter": "'### Under the interpreter'", "bench": "'## Performance'"}
DIFF_MARKER = "<!-- diff:"
TABLE_HEAD = re.compile(r"\|\s*category\s*\|\s*defect\s*\|")
BACKENDS = ("gpu", "interpreter")


@rule("C301", "section-empty", ERROR, needs=("readme",),
      why="the report publishes the write-up; a heading with nothing under it is a hole in the casebook")
def section_empty(case: CaseFolder) -> Iterator[Violation]:
    """A section that must hold text (What you would write, Why, The fix, How to catch it, Seen in the wild)
    has none of its own: only blanks and HTML comments."""
    for heading, fix in NEED_TEXT.items():
        h = case.readme.heading(heading)
        if h is not None and not case.readme.body(heading):
            yield Violation("README.md", f"the section '{heading}' is empty", fix, h.line)


@rule("C302", "section-missing", ERROR, needs=("readme",),
      why="every write-up has the same sections, so readers and the report find the same things in each")
def section_missing(case: CaseFolder) -> Iterator[Violation]:
    """A heading of the template is missing from README.md."""
    for heading in SECTIONS:
        if case.readme.heading(heading) is None:
            yield Violation("README.md", f"no section '{heading}'", "add it: the template is in CONTRIBUTING.md")


@rule("C303", "fix-without-diff", ERROR, needs=("readme",),
      why="the fix is shown as the minimal diff between broken.py and fixed.py; prose alone hides its size")
def fix_without_diff(case: CaseFolder) -> Iterator[Violation]:
    """The section '## The fix' has no code block fenced as diff (```diff), nor a <!-- diff:... --> marker
    (C309 checks what a marker holds)."""
    h = case.readme.heading("## The fix")
    if h is None or any(f.info == "diff" for f in case.readme.fences_in("## The fix")):
        return
    if DIFF_MARKER in case.readme.section_text("## The fix"):
        return  # an empty or unfillable diff block: C309 says so
    yield Violation("README.md", "the section '## The fix' has no ```diff block",
                  f"put {DIFF_MARKER}broken.py:fixed.py --> and <!-- /diff --> there, on lines of their own, "
                  f"then python -m harness record {case.slug} --splice-only fills in the diff", h.line)


@rule("C304", "recorded-markers-missing", ERROR, needs=("readme",),
      why="'python -m harness record' writes the measured tables between these markers; without them it cannot")
def recorded_markers_missing(case: CaseFolder) -> Iterator[Violation]:
    """A <!-- recorded:gpu -->, <!-- recorded:interpreter --> (or, with [bench], recorded:bench) marker pair is
    missing or out of order."""
    text = case.readme.text
    names = BACKENDS + (("bench",) if case.meta is not None and "bench" in case.meta else ())
    for name in names:
        start, end = marker(name)
        if not (start in text and end in text and text.index(start) < text.index(end)):
            yield Violation("README.md", f"no {start} ... {end} markers",
                          f"put the pair on two lines under {MARKER_PLACES[name]}; "
                          "'python -m harness record' fills them in")


def title_heading(case: CaseFolder):
    """The level-1 heading on the README's first line with text, or None."""
    first = case.readme.first_line()
    h = case.readme.headings[0] if case.readme.headings else None
    return h if h is not None and h.level == 1 and h.line == first else None


@rule("C305", "title-heading-missing", ERROR, needs=("readme",),
      why="the write-up's first line is its title; the report and the index use it")
def title_heading_missing(case: CaseFolder) -> Iterator[Violation]:
    """README.md does not start with '# <title>'."""
    if title_heading(case) is None:
        yield Violation("README.md", "does not start with '# <title>'", "make the first line '# ' and the title", 1)


@rule("C306", "title-mismatch", WARNING, needs=("readme", "spec"),
      why="the list, the report and the write-up should name the trap the same way")
def title_mismatch(case: CaseFolder) -> Iterator[Violation]:
    """The README's '# ' heading differs from the title in case.toml."""
    h = title_heading(case)
    if h is not None and h.text != case.spec.title and not re.search(r"\bTODO\b", h.text):
        yield Violation("README.md", "the heading differs from the title in case.toml", "use the same title in both",
                      h.line)


def summary_row(case: CaseFolder) -> int | None:
    """The 0-based line of the summary table's first row (two below its head), or None."""
    lines = case.readme.lines
    head = next((i for i, line in enumerate(lines) if TABLE_HEAD.match(line)), None)
    return head + 2 if head is not None and head + 2 < len(lines) else None


@rule("C307", "summary-table-missing", WARNING, needs=("readme",),
      why="the summary table under the opening paragraph says at a glance what the case is and does")
def summary_table_missing(case: CaseFolder) -> Iterator[Violation]:
    """README.md has no '| category | defect | ...' table with a row under its head."""
    if summary_row(case) is None:
        yield Violation("README.md", "no summary table under the opening paragraph",
                      "copy '| category | defect | broken on GPU | broken under the interpreter |' from the template")


@rule("C308", "summary-table-mismatch", WARNING, needs=("readme", "spec"),
      why="the table is written by hand; when case.toml changes it goes stale")
def summary_table_mismatch(case: CaseFolder) -> Iterator[Violation]:
    """The summary table's category, defect or declared behaviours differ from case.toml."""
    row, spec = summary_row(case), case.spec
    if row is None:
        return
    cells = [c.strip().strip("`") for c in case.readme.lines[row].strip().strip("|").split("|")]
    want = [spec.category, spec.defect]
    words = [{alt for v in spec.expect[b] for alt in v.split("|")} for b in BACKENDS]
    said = [set(re.findall(r"\b(" + "|".join(BEHAVIOURS) + r")\b", c)) for c in cells[2:4]]
    if cells[:2] != want or said != words:
        yield Violation("README.md", "the summary table does not match case.toml", "make it say: " + " | ".join(
            want + [spec.expect_text(b) for b in BACKENDS]), row + 1)


@rule("C309", "code-block-stale", ERROR, needs=("readme",),
      why="the write-up's code is the files' code; a block filled before the files last changed shows code "
          "the case does not run")
def code_block_stale(case: CaseFolder) -> Iterator[Violation]:
    """A <!-- code:... --> or <!-- diff:... --> block of README.md is empty, is not what the files give now, or
    names what cannot be shown (an unknown file or function, a missing end marker)."""
    refresh = f"python -m harness record {case.slug} --splice-only fills it from the files"
    try:
        found = snippets.stale(case.readme.text, case.path)
    except (OSError, ValueError) as e:  # a named file that cannot be read as text
        yield Violation("README.md", f"a code block cannot be filled: {e}", "save the files it names as UTF-8")
        return
    for line, what in found:
        if "have the same code" in what:
            fix = f"write the fix in fixed.py; then python -m harness record {case.slug} --splice-only fills the diff"
        elif "cannot be filled" in what or " has no <!-- /" in what:
            fix = (f"correct the marker or the file it names, then run python -m harness record {case.slug} "
                   "--splice-only; CONTRIBUTING.md gives the marker syntax")
        else:
            fix = refresh
        yield Violation("README.md", what, fix, line)


LONG_FIX = 6  # changed code lines a fix may have without the write-up saying why
SIZE_WORDS = re.compile(r"\b(longer|larger|bigger|smaller|(\d+|one|two|three|four|five|six|seven|eight|nine|ten|"
                        r"eleven|twelve|several|many|more) (changed |new |code )*lines?)\b", re.I)
REASON_WORDS = re.compile(r"\b(because|since|so|why|needs?|must|has to|have to|cannot|can't|only)\b", re.I)


def says_why_long(prose: str) -> bool:
    """Whether one sentence of ``prose`` speaks of the fix's size and gives a reason."""
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(prose.split()))
    return any(SIZE_WORDS.search(s) and REASON_WORDS.search(s) for s in sentences)


@rule("C310", "long-fix-unexplained", WARNING, needs=("readme", "broken.py", "fixed.py"),
      why="the fix is the lesson, and a reviewer asks for the smallest one; a longer diff needs its reason "
          "beside it, or it hides the point")
def long_fix_unexplained(case: CaseFolder) -> Iterator[Violation]:
    """The fix changes more than 6 code lines and no sentence of '## The fix' says why (a sentence that names
    its size, 'longer', 'eight lines' ..., and gives a reason, 'because' ...)."""
    h = case.readme.heading("## The fix")
    size = lessons.fix_size(case.text["broken.py"], case.text["fixed.py"])
    if h is None or size <= LONG_FIX or says_why_long(case.readme.prose("## The fix")):
        return
    yield Violation("README.md", f"the fix changes {size} code lines (more than {LONG_FIX}) and '## The fix' "
                  "does not say why", "make the fix smaller, or add a sentence there that says why it cannot be "
                  "('The diff is longer than most because ...')", h.line)
