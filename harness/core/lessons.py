"""What makes a case teach: markers on the right lines, a small fix, and copies that stay copies.

Pure functions over the texts of case files: nothing here reads a file, imports torch or
triton, or runs a kernel. ``check`` reports what they find; ``snippets`` shows the code
the way ``code_view`` sees it.

- ``code_view(source)``: the code of a case file as the casebook compares and shows it:
  the module docstring and the ``if __name__ == "__main__":`` footer left out, and the
  ``# BUG:`` / ``# FIX:`` / ``# NOTE:`` markers cut from the ends of lines. Each line
  keeps its number in the file.
- ``fix_size(broken, fixed)``: how many code lines the fix changes.
- ``marker_problems(broken, fixed)``: a ``# BUG:`` on a line the fix keeps, a ``# FIX``
  that gives no reason, changed lines with no ``# FIX:`` at all, ...
- ``near_copies(files)``: files of different cases that are almost, but not exactly,
  the same (a copy that drifted).

The marker rules: a ``# BUG:`` line is one that fixed.py changes or deletes (what a kept
line contributes to the bug goes in a ``# NOTE:``), and every ``# FIX:`` says why.
"""

from __future__ import annotations

import ast
import difflib
import io
import itertools
import re
import tokenize
from dataclasses import dataclass
from pathlib import PurePosixPath

MARKER_RE = re.compile(r"#\s*(BUG|FIX|NOTE)\b(:?)\s*(.*)")
KINDS = ("BUG", "FIX", "NOTE")


@dataclass(frozen=True)
class Marker:
    line: int  # 1-based line in the file
    column: int  # where the comment starts
    kind: str  # BUG, FIX or NOTE
    reason: str  # the text after 'BUG:' ('' when there is none)
    code: str  # the code before the marker, stripped ('' for a comment on a line of its own)


@dataclass(frozen=True)
class MarkerProblem:
    rule: str  # a short name for the rule: bug-on-kept-line, fix-without-reason, ...
    file: str  # broken.py or fixed.py
    line: int
    what: str
    fix: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.what} ({self.fix})"


@dataclass(frozen=True)
class NearCopy:
    a: str  # the two files, as named in the mapping given to near_copies
    b: str
    ratio: float  # similarity of their lines, 0..1
    differing: int  # lines that differ (the larger side of each difference)
    line_a: int  # the first line that differs, in a and in b
    line_b: int

    def __str__(self) -> str:
        return (f"{self.a}:{self.line_a} and {self.b}:{self.line_b} are near-copies "
                f"({self.differing} line(s) differ, {self.ratio:.0%} alike)")


# ---------------------------------------------------------------- reading a case file


def markers(source: str) -> list[Marker]:
    """Every ``# BUG`` / ``# FIX`` / ``# NOTE`` comment of ``source``, in order."""
    out = []
    for line, (col, comment, code) in sorted(_comments(source).items()):
        m = MARKER_RE.match(comment)
        if m:
            out.append(Marker(line, col, m.group(1), m.group(3).strip(), code))
    return out


def _comments(source: str) -> dict[int, tuple[int, str, str]]:
    """line -> (column, comment, code before it) for each comment; by regex if ``source`` does not tokenize."""
    out = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = (tok.start[1], tok.string, tok.line[:tok.start[1]].strip())
    except (tokenize.TokenError, IndentationError, SyntaxError):
        for no, text in enumerate(source.splitlines(), 1):
            m = re.search(r"#\s*(BUG|FIX|NOTE)\b.*", text)
            if m:
                out[no] = (m.start(), m.group(0), text[:m.start()].strip())
    return out


def strip_markers(source: str) -> list[str]:
    """The lines of ``source`` with trailing BUG/FIX/NOTE markers cut off (same number of lines)."""
    cut = {m.line: m.column for m in markers(source) if m.code}
    return [(text[:cut[no]] if no in cut else text).rstrip() for no, text in enumerate(source.splitlines(), 1)]


def _spans(source: str) -> tuple[set[int], set[int]]:
    """(the lines of the module docstring, the lines of a top-level ``if __name__ == "__main__":`` block)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return set(), set()
    doc, footer = set(), set()
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        doc = set(range(first.lineno, first.end_lineno + 1))
    for node in body:
        if isinstance(node, ast.If) and _is_main_test(node.test):
            footer.update(range(node.lineno, node.end_lineno + 1))
    return doc, footer


def _is_main_test(test: ast.AST) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and \
        any(isinstance(s, ast.Constant) and s.value == "__main__" for s in sides)


def code_view(source: str) -> list[tuple[int, str]]:
    """(line number, text) for the code of a case file: no docstring, no footer, no markers.

    Blank lines at either end are dropped; blank lines inside are kept.
    """
    doc, footer = _spans(source)
    skip = doc | footer
    out = [(no, text) for no, text in enumerate(strip_markers(source), 1) if no not in skip]
    while out and not out[0][1].strip():
        out.pop(0)
    while out and not out[-1][1].strip():
        out.pop()
    return out


# ---------------------------------------------------------------- broken.py against fixed.py


def align(broken: str, fixed: str):
    """(broken's code view, fixed's code view, difflib opcodes between them)."""
    a, b = code_view(broken), code_view(fixed)
    sm = difflib.SequenceMatcher(None, [t for _, t in a], [t for _, t in b], autojunk=False)
    return a, b, sm.get_opcodes()


def changed_lines(broken: str, fixed: str) -> tuple[int, int]:
    """(code lines removed, code lines added) by the fix; blank lines are not counted."""
    a, b, ops = align(broken, fixed)
    removed = sum(1 for tag, i1, i2, _, _ in ops if tag != "equal" for _, t in a[i1:i2] if t.strip())
    added = sum(1 for tag, _, _, j1, j2 in ops if tag != "equal" for _, t in b[j1:j2] if t.strip())
    return removed, added


def fix_size(broken: str, fixed: str) -> int:
    """Changed code lines: for each place the fix touches, the larger of lines removed and added."""
    a, b, ops = align(broken, fixed)
    size = 0
    for tag, i1, i2, j1, j2 in ops:
        if tag != "equal":
            size += max(sum(1 for _, t in a[i1:i2] if t.strip()), sum(1 for _, t in b[j1:j2] if t.strip()))
    return size


def marker_problems(broken: str, fixed: str) -> list[MarkerProblem]:
    """What is wrong with the BUG and FIX markers of one case, given the texts of its two files."""
    a, b, ops = align(broken, fixed)
    kept_a = {a[i][0] for tag, i1, i2, _, _ in ops if tag == "equal" for i in range(i1, i2)}
    kept_b = {b[j][0] for tag, _, _, j1, j2 in ops if tag == "equal" for j in range(j1, j2)}
    out = []
    for m in markers(broken):
        if m.kind == "BUG" and m.line in kept_a:
            out.append(MarkerProblem(
                "bug-on-kept-line", "broken.py", m.line, "the '# BUG:' line is one that fixed.py keeps unchanged",
                "put '# BUG:' on the line the fix changes or deletes; what this line adds to the story is a '# NOTE:'"))
    for m in markers(fixed):
        if m.kind != "FIX":
            continue
        if not m.reason or set(m.reason) <= set(".:;-… "):
            out.append(MarkerProblem("fix-without-reason", "fixed.py", m.line, "the '# FIX' marker gives no reason",
                                     "say why the change fixes the bug: '# FIX: why'"))
        if m.line in kept_b:
            out.append(MarkerProblem("fix-on-kept-line", "fixed.py", m.line,
                                     "the '# FIX:' line is the same in broken.py",
                                     "mark only the lines the fix changes or adds"))
    out += _unmarked_changes(a, b, ops, markers(broken), markers(fixed))
    return out


def _unmarked_changes(a, b, ops, bug_markers, fix_markers) -> list[MarkerProblem]:
    """Each place the fix changes must carry a '# FIX:' (or, for a deletion, a '# BUG:' on what goes)."""
    fix_lines = {m.line for m in fix_markers if m.kind == "FIX"}
    bug_lines = {m.line for m in bug_markers if m.kind == "BUG"}
    out = []
    for tag, i1, i2, j1, j2 in ops:
        new = [no for no, t in b[j1:j2] if t.strip()]
        old = [no for no, t in a[i1:i2] if t.strip()]
        if tag in ("replace", "insert") and new and not fix_lines & set(new):
            out.append(MarkerProblem("change-without-fix", "fixed.py", new[0],
                                     f"lines {new[0]}-{new[-1]} differ from broken.py and carry no '# FIX:'"
                                     if len(new) > 1 else "this line differs from broken.py and carries no '# FIX:'",
                                     "end the changed line with '# FIX: why'"))
        elif tag == "delete" and old and not bug_lines & set(old):
            out.append(MarkerProblem("deletion-without-bug", "broken.py", old[0],
                                     "the fix deletes this code, and no line of it carries a '# BUG:'",
                                     "end the faulty line with '# BUG: why'"))
    return out


# ---------------------------------------------------------------- copies between cases


def _copy_lines(source: str) -> list[tuple[int, str]]:
    """The lines two copies are compared on: markers cut, the footer dropped, blank lines dropped."""
    _, footer = _spans(source)
    return [(no, t) for no, t in enumerate(strip_markers(source), 1) if no not in footer and t.strip()]


def _case_of(name: str) -> str:
    return str(PurePosixPath(name).parent)


def near_copies(files: dict[str, str], threshold: float = 0.85, max_differing: int = 2,
                min_lines: int = 6) -> list[NearCopy]:
    """Pairs of files from different cases that are nearly the same but not byte-identical.

    ``files`` maps a path such as ``nrm2-race/case.py`` (the folder names the case) to
    its text. Files are compared on their lines, docstring included, with markers,
    blank lines and the ``__main__`` footer left out. Two files are near-copies when at
    least ``threshold`` of those lines match, or when no more than ``max_differing``
    lines differ (a short file that drifted by a line). Byte-identical files are
    intended copies and are never reported; nor are two files of one case (broken.py
    and fixed.py are near-copies on purpose), nor files shorter than ``min_lines``.
    Two cases that share a kernel but tell different stories differ in their
    docstrings by more than that, and are not reported.
    """
    lines = {name: _copy_lines(text) for name, text in files.items()}
    out = []
    for x, y in itertools.combinations(sorted(files), 2):
        if _case_of(x) == _case_of(y) or files[x] == files[y]:
            continue
        la, lb = lines[x], lines[y]
        if min(len(la), len(lb)) < min_lines:
            continue
        if abs(len(la) - len(lb)) > max(max_differing, (1 - threshold) * max(len(la), len(lb))):
            continue  # too different in length to be either
        sm = difflib.SequenceMatcher(None, [t for _, t in la], [t for _, t in lb], autojunk=False)
        ops = [op for op in sm.get_opcodes() if op[0] != "equal"]
        differing = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in ops)
        if sm.ratio() < threshold and differing > max_differing:
            continue
        if ops:
            line_a, line_b = la[min(ops[0][1], len(la) - 1)][0], lb[min(ops[0][3], len(lb) - 1)][0]
        else:  # the same code lines: they differ in markers, blank lines or the footer
            line_a = line_b = _first_difference(files[x], files[y])
        out.append(NearCopy(x, y, sm.ratio(), differing, line_a, line_b))
    return out


def _first_difference(x: str, y: str) -> int:
    for no, (p, q) in enumerate(itertools.zip_longest(x.splitlines(), y.splitlines()), 1):
        if p != q:
            return no
    return 1
