"""``Casebook``: every case folder of one cases root, for the rules that look across cases.

Most rules read one folder (``CaseFolder``). A few compare a case with the others: its
slug and title with theirs (C7xx), its Python files with theirs (C801). They share one
``Casebook`` per ``check`` run, which the engine hands to every folder it checks, with
the slugs it checks:

- the other folders are listed once, and each case's Python files read once;
- the near-copies are found in one pass per file name (``lessons.near_copies``, which
  reads each file once; case.py is compared with case.py, fixed.py with fixed.py ...)
  over the checked cases' files and the other cases' files that could match them. Files of cases that are not checked are never compared with each other, and a
  file that has too few lines in common with every checked file to be a near-copy of
  one (``Shape``, a count of lines) is not even parsed.

So ``check <slug>`` compares that case's few files with the others', and ``check`` of
every case compares each pair of files once. Nothing here raises for a malformed
folder: a file that cannot be read as UTF-8 is left out (C102 reports it).
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from harness.core import discovery, lessons

COMPARED = ("case.py", "broken.py", "fixed.py", "fast.py")  # the files copies are looked for among
UNCHECKED = "(unchecked)"  # one pseudo-case for every file of a case not being checked: never compared together
MAIN_RE = re.compile(r"^if __name__ == ['\"]__main__['\"]\s*:", re.M)


@dataclass(frozen=True)
class Shape:
    """What a file's lines allow ``near_copies`` to find: bounds on how many lines it compares, and those lines
    cut at their first '#' (so two lines it finds equal, markers cut, are equal here too)."""

    low: int
    high: int
    lines: Counter

    @classmethod
    def of(cls, text: str) -> "Shape":
        lines = [line for line in text.splitlines() if line.strip()]
        m = MAIN_RE.search(text)
        if m is None:  # no footer, or one written another way: it may be anything up to the whole file
            low = 0 if "__main__" in text else len(lines)
        else:
            low = len(lines) - len([line for line in text[m.start():].splitlines() if line.strip()])
        return cls(low, len(lines), Counter(line.split("#", 1)[0].strip() for line in lines))

    def may_match(self, other: "Shape", threshold: float = 0.85, max_differing: int = 2) -> bool:
        """False only where ``near_copies`` cannot report the pair (same defaults): too few lines in common."""
        common = sum((self.lines & other.lines).values())  # at least the lines difflib can match
        if max(self.low, other.low) - common <= max_differing:
            return True
        return 2 * common >= threshold * (self.low + other.low)


class Casebook:
    """The case folders under ``root``, read lazily and once; ``checked``: the slugs this run checks."""

    def __init__(self, root: Path, checked: list[str] | None = None):
        self.root = root
        self.checked = set(checked or ())
        self._copies: dict[str, list[lessons.NearCopy]] = {}  # slug -> the near-copies found for it

    @cached_property
    def folders(self) -> list[Path]:
        """Every case folder under the root (drafts, whose names start with '_' or '.', left out)."""
        return discovery.case_folders(self.root)

    def others(self, slug: str) -> list[Path]:
        """The case folders other than ``slug``."""
        return [p for p in self.folders if p.name != slug]

    @cached_property
    def titles(self) -> dict[str, str]:
        """slug -> the title in its case.toml, for every case whose case.toml reads and has a string title."""
        out = {}
        for folder in self.folders:
            try:
                title = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8")).get("title")
            except (OSError, ValueError):
                continue
            if isinstance(title, str):
                out[folder.name] = title
        return out

    @cached_property
    def texts(self) -> dict[str, dict[str, str]]:
        """slug -> {file name: text}, for each compared file of every case that reads as UTF-8."""
        out: dict[str, dict[str, str]] = {}
        for folder in self.folders:
            for name in COMPARED:
                try:
                    out.setdefault(folder.name, {})[name] = (folder / name).read_bytes().decode("utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
        return out

    def _find(self, slugs: set[str], own: dict[str, dict[str, str]]) -> None:
        """Find the near-copies of the files of ``slugs`` (texts from ``own``, else as read) in one pass."""
        mine = {f"{s}/{n}": t for s in slugs for n, t in (own.get(s) or self.texts.get(s, {})).items()}
        shapes = {k: Shape.of(t) for k, t in mine.items()}
        files = dict(mine)
        for slug, texts in self.texts.items():
            for name, text in texts.items() if slug not in slugs else ():
                shape = Shape.of(text)
                if any(k.endswith("/" + name) and shape.may_match(m) for k, m in shapes.items()):
                    files[f"{UNCHECKED}/{slug}/{name}"] = text
        for s in slugs:
            self._copies.setdefault(s, [])
        for name in COMPARED:  # a copy is of the same file: case.py of case.py, fixed.py of fixed.py ...
            group = {k: t for k, t in files.items() if k.endswith("/" + name)}
            for found in lessons.near_copies(group) if len(group) > 1 else ():
                for side in (found.a, found.b):
                    if not side.startswith(UNCHECKED + "/"):
                        self._copies[side.split("/", 1)[0]].append(found)

    def near_copies(self, slug: str, own: dict[str, str]) -> list[tuple[str, str, int, lessons.NearCopy]]:
        """(own file, '<other slug>/<file>', line in the own file, the near-copy) for each drifted copy of ``slug``.

        ``own`` maps the case's file names to their texts, as its folder read them.
        """
        if slug not in self._copies:
            batch = self.checked if slug in self.checked else {slug}
            self._find(batch, {slug: {n: t for n, t in own.items() if n in COMPARED}})
        out = []
        for found in self._copies[slug]:
            (me, line), (other, _) = sorted([(found.a, found.line_a), (found.b, found.line_b)],
                                            key=lambda side: not side[0].startswith(f"{slug}/"))
            out.append((me.split("/", 1)[1], other.removeprefix(UNCHECKED + "/"), line, found))
        return out
