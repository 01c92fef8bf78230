"""Writing files so that a reader never sees half of one, and a record is all new or all old.

Every file the harness writes goes through here: the new text goes to a temporary
file beside the target, is flushed to disk, and is renamed over the target
(``os.replace`` is atomic on one file system). ``write_together`` writes several
files as a unit: all temporary files first (a full disk fails here, before anything
is replaced), then every rename with SIGINT and SIGTERM held back, so an interrupt
lands before the first rename or after the last.
"""

from __future__ import annotations

import os
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path


def _new_temp(path: Path) -> tuple[int, Path]:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    return fd, Path(tmp)


def _temp_beside(path: Path, data: bytes, fd: int) -> None:
    """Write ``data`` through ``fd`` (a temporary file beside ``path``) and flush it to disk."""
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


@contextmanager
def signals_held():
    """SIGINT and SIGTERM wait until the block is over (main thread only; elsewhere a no-op)."""
    held = {signal.SIGINT, signal.SIGTERM}
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    except (ValueError, OSError):
        old = None
    try:
        yield
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def write_together(files: dict[Path, str | bytes]) -> list[Path]:
    """Write every ``path: content`` or none: temporaries first, then the renames."""
    temps: dict[Path, Path] = {}
    try:
        for path, content in files.items():
            path = Path(path)
            data = content.encode() if isinstance(content, str) else content
            fd, temps[path] = _new_temp(path)  # known before a byte is written: removed whatever happens
            _temp_beside(path, data, fd)
        with signals_held():
            for path, tmp in temps.items():
                os.replace(tmp, path)
    finally:
        for tmp in temps.values():
            tmp.unlink(missing_ok=True)
    return list(temps)


def write_text(path: Path, text: str) -> Path:
    """One file, atomically."""
    return write_together({Path(path): text})[0]
