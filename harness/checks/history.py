"""When a file last changed: its last commit where git tracks it unmodified, else its mtime."""

from __future__ import annotations

import datetime
import subprocess
from pathlib import Path

DATE_FORMAT = "%Y-%m-%d %H:%M UTC"  # how recorded runs write their date


def last_change(path: Path) -> tuple[float, bool]:
    """(when ``path`` last changed, whether that is a commit time)."""
    try:
        git = dict(cwd=path.parent, capture_output=True, text=True, timeout=20)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", path.name], **git)
        if dirty.returncode == 0 and not dirty.stdout.strip():
            log = subprocess.run(["git", "log", "-1", "--format=%ct", "--", path.name], **git)
            if log.returncode == 0 and log.stdout.strip():
                return float(log.stdout.strip()), True
    except (OSError, subprocess.SubprocessError):
        pass
    return path.stat().st_mtime, False


def when(t: float) -> str:
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime(DATE_FORMAT)


def parse_date(text: str) -> float | None:
    """A recorded run's date ('2025-01-31 12:00 UTC') as a timestamp; None when it is not one."""
    try:
        return datetime.datetime.strptime(text, DATE_FORMAT).replace(tzinfo=datetime.timezone.utc).timestamp()
    except (TypeError, ValueError):
        return None
