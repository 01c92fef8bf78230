"""What a rule reports: a ``Violation`` (file, line, what, fix); the engine makes it a ``Problem``.

A problem is printed as one line, the same shape as a compiler's or ruff's::

    error: cases/x/README.md:12: C301 the section '## Why' is empty (explain the mechanism)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class Violation:
    """One thing a rule found: in ``file`` (relative to the case folder, None for the folder itself)."""

    file: str | None
    what: str
    fix: str
    line: int | None = None


@dataclass
class Problem:
    code: str  # the rule's code, e.g. C301
    level: str  # ERROR or WARNING (``check --strict`` turns warnings into errors)
    where: str  # cases/<slug>[/<file>[:line]], as the user would type it
    what: str
    fix: str
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.level}: {self.where}: {self.code} {self.what} ({self.fix})"


def shown(path: Path) -> str:
    """``path`` as the user would type it: relative to the current folder where it can be."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def locate(prefix: str, finding: Violation) -> str:
    """``cases/<slug>/<file>:<line>``: where a finding is, for the printed line."""
    return prefix + (f"/{finding.file}" if finding.file else "") + (f":{finding.line}" if finding.line else "")
