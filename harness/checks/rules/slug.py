"""C7xx, slug: the folder's name is a slug, and the case is not another one under a second name."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

from harness.checks.folder import CaseFolder
from harness.checks.problem import ERROR, Violation, Problem, locate, shown
from harness.checks.registry import rule
from harness.core import discovery
from harness.core.spec import SLUG_RE

TODO_RE = re.compile(r"\bTODO\b")


def slug_key(slug: str) -> str:
    return re.sub(r"[^a-z0-9]", "", slug.lower())


def title_key(title: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", title.lower()).split())


@rule("C701", "slug-malformed", ERROR,
      why="the slug is the case's name on the command line, in test ids and in links; it must be typeable")
def slug_malformed(case: CaseFolder) -> Iterator[Violation]:
    """The folder's name is not lowercase words joined by '-'."""
    if not SLUG_RE.match(case.slug):
        better = re.sub(r"[^a-z0-9]+", "-", case.slug.lower()).strip("-") or "name-of-the-bug"
        yield Violation(None, "the folder name is not a slug (lowercase words joined by '-')",
                      f"rename the folder to {better}")


def clashes(slug: str, folders: list[Path]) -> Iterator[Violation]:
    for p in folders:
        if p.name != slug and slug_key(p.name) == slug_key(slug):
            yield Violation(None, f"the slug clashes with the case '{p.name}' (they differ only in case, '-' or '_')",
                          "pick a name that says what is different about this bug")


@rule("C702", "slug-clash", ERROR,
      why="names that differ only in case or punctuation are the same case twice, or a typo away from it")
def slug_clash(case: CaseFolder) -> Iterator[Violation]:
    """Another case's folder name differs from this one only in case, '-' or '_'."""
    yield from clashes(case.slug, case.casebook.others(case.slug))


@rule("C703", "title-duplicate", ERROR, needs=("spec",),
      why="two cases with one title are one trap written up twice, or two traps the title fails to tell apart")
def title_duplicate(case: CaseFolder) -> Iterator[Violation]:
    """Another case has the same title (compared without case and punctuation)."""
    mine = title_key(case.spec.title)
    if TODO_RE.search(case.spec.title) or not mine:
        return
    for other in case.casebook.others(case.slug):  # the casebook reads each case.toml once per run
        title = case.casebook.titles.get(other.name)
        if title is not None and title_key(title) == mine:
            yield Violation("case.toml", f"the same title as the case '{other.name}'",
                          "if it is the same trap, improve that case; if not, say in the title what differs")


def slug_problems(slug: str, root: Path) -> list[Problem]:
    """C702 for a folder not yet made: the cases under ``root`` whose names clash with ``slug`` (for 'new')."""
    prefix = shown(root / slug)
    return [Problem("C702", ERROR, locate(prefix, f), f.what, f.fix)
            for f in clashes(slug, discovery.case_folders(root))]
