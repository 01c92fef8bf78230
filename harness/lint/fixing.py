"""``lint --fix`` and ``--diff``: the fixes rules attach to their hits (``harness/lint/fixes.py``), applied.

``fixed(source, path, select, ignore)`` applies them one at a time, linting again after each (a second fix of
the same autotune call then extends the list the first one added), never keeps an edit that leaves the file
unparseable, and stops when nothing fixable is left. ``fix_paths`` does it for files: written whole or not at
all (``core/fileio``), their mode and encoding kept.
"""

from __future__ import annotations

import ast
import difflib
import io
import os
import tokenize
from dataclasses import dataclass, field

from harness.core import fileio
from harness.lint.engine import LintError, lint_source
from harness.lint.files import MAX_BYTES, Unreadable, display, python_files, read_source
from harness.lint.fixes import apply

MAX_ROUNDS = 200  # fixes applied to one file, at most: each is one finding


def fixed(source: str, path: str, select=None, ignore=None) -> tuple[str, list]:
    """The source with every fixable finding fixed, and the fixes made (their findings), in order."""
    made, tried = [], set()
    for _ in range(MAX_ROUNDS):
        todo = [f for f in lint_source(source, path, select, ignore)
                if f.fix is not None and (f.code, f.fix.edits) not in tried]
        if not todo:
            break
        f = todo[0]
        tried.add((f.code, f.fix.edits))
        candidate = apply(source, f.fix.edits)
        try:
            ast.parse(candidate)
        except SyntaxError:
            continue  # never write a file that does not parse
        source = candidate
        made.append(f)
    return source, made


def diff(before: str, after: str, path: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        f"a/{path}", f"b/{path}"))


@dataclass
class FixRun:
    diff: str = ""
    fixes: int = 0
    files: list = field(default_factory=list)
    errors: list = field(default_factory=list)


def fix_paths(paths: list[str], select=None, ignore=None, write: bool = False, max_bytes: int | None = None) -> FixRun:
    """Fix every file under ``paths`` (``write``: in place, each file whole or untouched, its mode and encoding
    kept); the unified diff of what changed (or would). A file that cannot be linted is one error."""
    run = FixRun()
    for path in python_files(paths, lambda p, message: run.errors.append(LintError(p, message))):
        shown = display(path)
        try:
            before = read_source(path, max_bytes or MAX_BYTES)
            if "triton" not in before:
                continue
            after, made = fixed(before, shown, select, ignore)
        except Unreadable as e:
            run.errors.append(LintError(shown, str(e)))
            continue
        except SyntaxError as e:
            run.errors.append(LintError(shown + (f":{e.lineno}" if e.lineno else ""), f"does not parse: {e.msg}"))
            continue
        except Exception as e:  # lint's own failure on this file: said, and the next file is fixed
            run.errors.append(LintError(shown, f"lint failed on this file: {type(e).__name__}: {e}"))
            continue
        if not made:
            continue
        run.diff += diff(before, after, shown)
        run.fixes += len(made)
        run.files.append(shown)
        if write:
            data = path.read_bytes()
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            mode = os.stat(path).st_mode & 0o7777
            fileio.write_together({path: after.encode(encoding)})
            os.chmod(path, mode)
    return run
