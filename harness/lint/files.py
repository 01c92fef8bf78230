"""Which files ``lint`` reads and how: each one on its own, so that one file never sinks the run.

- Folders are walked (hidden ones and ``SKIP_DIRS`` skipped, links to folders not followed); a folder that
  cannot be listed is one error, the rest of the walk goes on.
- Only regular files are read: a FIFO, a device, a link to nothing or a link that loops is one error
  naming what it is (a FIFO is opened without blocking, so it cannot hang the run).
- A file over ``MAX_BYTES`` is skipped with an error line (``--max-size`` raises the limit).
- Bytes are decoded as Python decodes a source file: a UTF-8 BOM, a ``# -*- coding: ... -*-`` cookie
  (``tokenize.detect_encoding``), UTF-8 otherwise.
"""

from __future__ import annotations

import errno
import io
import os
import stat
import tokenize
from pathlib import Path

SKIP_DIRS = {"__pycache__", "node_modules", "site-packages"}
MAX_BYTES = 1 << 20  # 1 MiB: about 25,000 lines, linted in about 2 s; Triton kernels' files are far smaller


class Unreadable(Exception):
    """A file or folder lint cannot read; ``str()`` says why in a few words."""


def what_it_is(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def why(e: OSError, path: str) -> str:
    """An OSError in a few words: the loops and dangling links named as such."""
    if e.errno == errno.ELOOP:
        return "a link that loops (too many levels of symbolic links)"
    if e.errno == errno.ENOENT and os.path.islink(path):
        return f"a link to nothing ({os.readlink(path)} does not exist)"
    if e.errno == errno.ENOENT:
        return "no such file or folder"
    return e.strerror or type(e).__name__


def python_files(paths: list[str], on_error) -> list[Path]:
    """The .py files named, and those under the folders named, sorted within each folder.
    ``on_error(path, message)`` is called for each path that names nothing lint can read."""
    out = []
    for name in paths:
        if not name:
            on_error("''", "an empty path names no file or folder")
            continue
        try:
            mode = os.stat(name).st_mode
        except OSError as e:
            on_error(name, why(e, name))
            continue
        if stat.S_ISDIR(mode):
            out += walk(Path(name), on_error)
        else:
            out.append(Path(name))  # a FIFO or device named on the command line: read_source says what it is
    return out


def walk(top: Path, on_error) -> list[Path]:
    out = []

    def unlistable(e: OSError) -> None:
        on_error(e.filename or str(top), f"cannot be read: {why(e, e.filename or str(top))}")

    for root, dirs, files in os.walk(top, onerror=unlistable):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        out += [Path(root) / f for f in sorted(files) if f.endswith(".py")]
    return out


def read_source(path: Path, max_bytes: int | None = MAX_BYTES) -> str:
    """The text of one regular file, decoded as Python would (``max_bytes`` None: no limit); raises
    Unreadable saying why not."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise Unreadable(why(e, str(path))) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable(f"not a regular file ({what_it_is(info.st_mode)}): not read")
        if max_bytes is not None and info.st_size > max_bytes:
            raise Unreadable(f"skipped: {info.st_size:,} bytes, over the limit of {max_bytes:,} "
                             f"(--max-size raises it)")
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            data = f.read(-1 if max_bytes is None else max_bytes + 1)
    except OSError as e:
        raise Unreadable(f"cannot be read: {why(e, str(path))}") from None
    finally:
        if fd >= 0:
            os.close(fd)
    if max_bytes is not None and len(data) > max_bytes:  # grew since fstat
        raise Unreadable(f"skipped: over the limit of {max_bytes:,} bytes (--max-size raises it)")
    return decode(data)


def decode(data: bytes) -> str:
    """Source bytes as Python decodes them (PEP 263: a BOM, a coding cookie, else UTF-8)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError) as e:
        raise Unreadable(f"cannot be decoded: {getattr(e, 'msg', None) or e}") from None


def display(path: Path) -> str:
    """The path as the user gave it, or relative to the working folder when it is under it; bytes that are
    not UTF-8 in a file's name shown as ``\\xNN`` (printable whatever the name)."""
    if str(path) == "''":
        return "''"
    try:
        shown = Path(os.path.abspath(path)).relative_to(Path.cwd()).as_posix()
    except (ValueError, OSError):
        shown = str(path)
    return shown.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
