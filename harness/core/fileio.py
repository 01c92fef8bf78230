"""Writing files so that a reader never sees half of one, and a record is all new or all old.

Every file the harness writes goes through here: the new text goes to a temporary
file beside the target, is flushed to disk, and is renamed over the target
(``os.replace`` is atomic on one file system). ``write_together`` writes several
files as a unit: all temporary files first (a full disk fails here, before anything
is replaced), then every rename with SIGINT and SIGTERM held back (in every thread: see
``signals_held``), so an interrupt lands before the first rename or after the last. ``replace_together`` does the same
for files and folders made elsewhere (``report``'s page, HTML and pictures), and
``new_folder`` makes a folder that appears whole or not at all.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
from contextlib import contextmanager
from pathlib import Path


def _unique(parent: Path, prefix: str, suffix: str, make):
    """``make(path)`` on a new name in ``parent`` (``prefix`` random ``suffix``), retried on a name taken."""
    import secrets

    for _ in range(100):
        path = Path(parent) / f"{prefix}{secrets.token_hex(4)}{suffix}"
        try:
            return make(path)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name in {parent}")


def _new_temp(path: Path) -> tuple[int, Path]:
    """A new temporary file beside ``path``, opened for writing, with the mode ``path`` has, or (a new
    file) the one the umask gives any new file: not mkstemp's 0600, which made every page, record and
    write-up the harness wrote unreadable to the other users of the machine and to a web server."""
    def make(tmp: Path):
        return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666), tmp

    fd, tmp = _unique(path.parent, f".{path.name}.", ".tmp", make)
    try:
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
    except FileNotFoundError:
        pass
    except OSError:  # a target we may not chmod like (another owner's): the umask's mode stays
        pass
    return fd, tmp


def new_temp_folder(parent: Path, prefix: str, suffix: str = "") -> Path:
    """A new folder in ``parent`` with the mode the umask gives any new folder (not mkdtemp's 0700:
    a folder renamed into place, such as report's pictures, is then readable as the rest)."""
    def make(p: Path) -> Path:
        os.mkdir(p, 0o777)
        return p

    return _unique(parent, prefix, suffix, make)


def _temp_beside(path: Path, data: bytes, fd: int) -> None:
    """Write ``data`` through ``fd`` (a temporary file beside ``path``) and flush it to disk."""
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


HELD = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def signals_held():
    """SIGINT and SIGTERM wait until the block is over, whichever thread the system hands them to.

    Blocking them with ``pthread_sigmask`` covers the calling thread only: with other
    threads alive (the fork server's reader) the signal lands in one of those, and
    Python still raises in the main thread at its next instruction. So, in the main
    thread, each handler is swapped for one that only notes the signal (Python runs
    handlers in the main thread alone); at the end the old handlers come back and each
    noted signal is raised again, to be handled as it would have been. In another
    thread no handler can interrupt this one, and the block runs as it is.
    """
    noted: list[int] = []
    old = {}
    if threading.current_thread() is threading.main_thread():
        for sig in HELD:
            try:
                old[sig] = signal.signal(sig, lambda signum, frame: noted.append(signum))
            except (ValueError, OSError, TypeError):
                pass
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        for sig in dict.fromkeys(noted):
            signal.raise_signal(sig)


def write_together(files: dict[Path, str | bytes]) -> list[Path]:
    """Write every ``path: content`` or none: temporaries first, then the renames."""
    temps: dict[Path, Path] = {}
    try:
        for path, content in files.items():
            path = Path(path)
            data = content.encode() if isinstance(content, str) else content
            with signals_held():  # made and known as one step: removed whatever happens
                fd, temps[path] = _new_temp(path)
            _temp_beside(path, data, fd)
        with signals_held():
            for path, tmp in temps.items():
                os.replace(tmp, path)
    finally:
        with signals_held():  # every temporary file removed, a second Ctrl-C or not
            for tmp in temps.values():
                tmp.unlink(missing_ok=True)
    return list(temps)


def write_text(path: Path, text: str) -> Path:
    """One file, atomically."""
    return write_together({Path(path): text})[0]


def replace_together(moves: dict[Path, Path], trash: Path) -> None:
    """Move each staged file or folder onto its target (``{staged: target}``), as one set.

    The staged paths and ``trash`` (an empty folder for the old ones) must be on the
    targets' file system. A file replaces its target in one rename (the old one is kept
    in ``trash`` by a hard link); a folder's old copy is renamed into ``trash`` first.
    If a rename fails, the ones already made are undone, so the old set stays whole.
    """
    done: list[tuple[Path, Path, Path | None]] = []  # (staged, target, where the old target went)
    with signals_held():
        try:
            for staged, target in moves.items():
                old = trash / f"{len(done)}-{target.name}" if os.path.lexists(target) else None
                if old is not None and target.is_dir() and not target.is_symlink():
                    os.rename(target, old)
                elif old is not None:
                    _keep_copy(target, old)
                done.append((staged, target, old))
                os.replace(staged, target)
        except OSError:
            _undo(done)
            raise


def _keep_copy(path: Path, to: Path) -> None:
    """``to`` becomes the file ``path`` is now: a hard link, else a copy."""
    try:
        os.link(path, to, follow_symlinks=False)
    except OSError:
        shutil.copy2(path, to, follow_symlinks=False)


def _undo(done: list[tuple[Path, Path, Path | None]]) -> None:
    """Put back what ``replace_together`` moved, last first (best effort: the first error is the one raised)."""
    for staged, target, old in reversed(done):
        try:
            if os.path.lexists(target) and not os.path.lexists(staged):
                os.rename(target, staged)  # the new one, back where it was staged
            if old is not None:
                os.replace(old, target)
        except OSError:
            pass


@contextmanager
def new_folder(path: Path):
    """Yield a temporary folder beside ``path`` to fill; on success it becomes ``path`` in one rename.

    ``path`` must not exist (FileExistsError if it does, or appears meanwhile); on any
    error the temporary folder is removed and nothing is left at ``path``.
    """
    path = Path(path)
    staging = new_temp_folder(path.parent, f".{path.name}.", ".new")
    try:
        yield staging
        for f in staging.rglob("*"):
            if f.is_file():
                with open(f, "rb") as fh:
                    os.fsync(fh.fileno())
        with signals_held():
            if os.path.lexists(path):
                raise FileExistsError(f"{path} already exists")
            os.rename(staging, path)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
