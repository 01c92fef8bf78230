"""Code in the write-ups comes from the case's files: ``code`` and ``diff`` blocks.

A write-up does not type code by hand. It names what to show between two markers, and
the harness fills the space between them from the files, the way it fills recorded runs
(``harness.core.recorded``)::

    <!-- code:broken.py:sumsq_kernel,nrm2 -->   top-level functions by name, decorators included
    <!-- /code -->
    <!-- code:broken.py:40-52 -->               lines 40 to 52 of the file, dedented
    <!-- /code -->
    <!-- code:broken.py -->                     the whole file
    <!-- /code -->
    <!-- diff:broken.py:fixed.py -->            the unified diff of the code, as a ```diff block
    <!-- /diff -->
    <!-- diff:broken.py:fixed.py:3 -->          ... with 3 lines of context (default 2)
    <!-- /diff -->

Both show code, not the casebook's annotations: the module docstring, the
``if __name__ == "__main__":`` footer and the ``# BUG:`` / ``# FIX:`` / ``# NOTE:``
markers at the ends of lines are left out (the prose says why a line is wrong, and a
marker that differs would make an unchanged line look changed). Ordinary comments stay.
The diff's ``@@`` headers give the lines' real numbers in the two files.

``fill(text, case_dir)`` returns the write-up with every block filled; ``stale(text,
case_dir)`` lists the blocks whose content is not what ``fill`` would write, and the
markers it cannot resolve, as (line, what) pairs.
"""

from __future__ import annotations

import ast
import difflib
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from harness.core.lessons import code_view, strip_markers

OPEN_RE = re.compile(r"<!--\s*(code|diff):([^\s>]*)\s*-->")
BLOCK_RE = re.compile(r"<!--\s*(code|diff):([^\s>]*)\s*-->(.*?)<!--\s*/\1\s*-->", re.S)
FENCE = {"code": "python", "diff": "diff"}
DEFAULT_CONTEXT = 2


class SnippetError(ValueError):
    """A marker that cannot be filled: an unknown file or name, a bad range, a missing end marker."""


@dataclass(frozen=True)
class Block:
    kind: str  # code or diff
    arg: str  # what follows 'code:' or 'diff:'
    line: int  # 1-based line of the opening marker
    start: int  # offsets of the text between the two markers
    end: int

    @property
    def marker(self) -> str:
        return f"<!-- {self.kind}:{self.arg} -->"


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def blocks(text: str) -> list[Block]:
    """Every code and diff block of a write-up, in order; SnippetError for an opener with no end marker."""
    out, covered = [], []
    for m in BLOCK_RE.finditer(text):
        inner = OPEN_RE.search(m.group(3))
        if inner:
            raise SnippetError(f"line {_line_of(text, m.start())}: <!-- {m.group(1)}:{m.group(2)} --> "
                               f"has no <!-- /{m.group(1)} --> before the next block")
        out.append(Block(m.group(1), m.group(2), _line_of(text, m.start()), m.start(3), m.end(3)))
        covered.append((m.start(), m.end()))
    for m in OPEN_RE.finditer(text):
        if not any(a <= m.start() < b for a, b in covered):
            raise SnippetError(f"line {_line_of(text, m.start())}: {m.group(0)} has no <!-- /{m.group(1)} -->")
    return out


# ---------------------------------------------------------------- what a block shows


def _read(case_dir: Path, name: str) -> str:
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise SnippetError(f"'{name}' is not a file of the case folder")
    path = Path(case_dir) / name
    if not path.is_file():
        raise SnippetError(f"{name}: no such file in {Path(case_dir).name}/")
    return path.read_text()


def _named(source: str, names: list[str], file: str) -> str:
    """The top-level functions or classes ``names`` of ``source``, decorators included, markers cut."""
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise SnippetError(f"{file} does not parse: {e.msg}") from None
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    lines = strip_markers(source)
    parts = []
    for name in names:
        node = defs.get(name)
        if node is None:
            known = ", ".join(defs) or "none"
            raise SnippetError(f"{file} defines no top-level '{name}' (it defines: {known})")
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        parts.append("\n".join(lines[first - 1:node.end_lineno]).rstrip())
    return "\n\n\n".join(parts)


def _range(source: str, spec: str, file: str) -> str:
    a, b = (int(x) for x in spec.split("-"))
    lines = strip_markers(source)
    if not 1 <= a <= b <= len(lines):
        raise SnippetError(f"{file} has {len(lines)} lines: the range {spec} is outside it")
    return textwrap.dedent("\n".join(lines[a - 1:b])).strip("\n")


def code(case_dir: Path, arg: str) -> str:
    """The code a ``code:`` marker names (``file``, ``file:name,name`` or ``file:first-last``)."""
    file, _, what = arg.partition(":")
    source = _read(case_dir, file)
    if not what:
        return "\n".join(t for _, t in code_view(source))
    if re.fullmatch(r"\d+-\d+", what):
        return _range(source, what, file)
    names = [n for n in what.split(",") if n]
    if not names or not all(n.isidentifier() for n in names):
        raise SnippetError(f"'{what}' is neither a name (or names, joined by ',') nor a line range 'first-last'")
    return _named(source, names, file)


def unified(old: str, new: str, old_name: str, new_name: str, context: int = DEFAULT_CONTEXT) -> str:
    """The unified diff between the code views of two case files; '' when their code is the same."""
    a, b = code_view(old), code_view(new)
    sm = difflib.SequenceMatcher(None, [t for _, t in a], [t for _, t in b], autojunk=False)
    hunks = [_hunk(a, b, g) for g in sm.get_grouped_opcodes(context) if any(op[0] != "equal" for op in g)]
    if not hunks:
        return ""
    return "\n".join([f"--- {old_name}", f"+++ {new_name}"] + [line for h in hunks for line in h])


def _hunk(a, b, group) -> list[str]:
    """One hunk: its '@@' header in the files' own line numbers, then its lines; blank context at its ends trimmed."""
    rows = []  # (prefix, text, index in a or None, index in b or None)
    for tag, p1, p2, q1, q2 in group:
        if tag == "equal":
            rows += [(" ", a[p1 + k][1], p1 + k, q1 + k) for k in range(p2 - p1)]
        else:
            rows += [("-", a[i][1], i, None) for i in range(p1, p2)]
            rows += [("+", b[j][1], None, j) for j in range(q1, q2)]
    while rows and rows[0][0] == " " and not rows[0][1].strip():
        rows.pop(0)
    while rows and rows[-1][0] == " " and not rows[-1][1].strip():
        rows.pop()
    ia = [r[2] for r in rows if r[2] is not None]
    jb = [r[3] for r in rows if r[3] is not None]
    head = f"@@ -{_span(a, ia, group[0][1])} +{_span(b, jb, group[0][3])} @@"
    return [head] + [(p + t).rstrip() if p == " " else p + t for p, t, _, _ in rows]


def _span(view: list[tuple[int, str]], idx: list[int], at: int) -> str:
    """A hunk's range on one side, as unified diffs write it: 'first,count' in the file's line numbers."""
    if not idx:  # nothing on this side: the line before the hunk, and a count of 0
        return f"{view[at - 1][0] if at else 0},0"
    return f"{view[idx[0]][0]},{len(idx)}"


def diff(case_dir: Path, arg: str) -> str:
    """The diff a ``diff:`` marker names (``old:new`` or ``old:new:context``)."""
    parts = arg.split(":")
    if len(parts) not in (2, 3) or (len(parts) == 3 and not parts[2].isdigit()):
        raise SnippetError(f"'diff:{arg}' should be 'diff:old.py:new.py' or 'diff:old.py:new.py:context'")
    context = int(parts[2]) if len(parts) == 3 else DEFAULT_CONTEXT
    text = unified(_read(case_dir, parts[0]), _read(case_dir, parts[1]), parts[0], parts[1], context)
    if not text:
        raise SnippetError(f"{parts[0]} and {parts[1]} have the same code: there is no diff to show")
    return text


def render(block: Block, case_dir: Path) -> str:
    """What belongs between the block's markers: a fenced code block, on lines of its own."""
    body = code(case_dir, block.arg) if block.kind == "code" else diff(case_dir, block.arg)
    return f"\n```{FENCE[block.kind]}\n{body}\n```\n"


# ---------------------------------------------------------------- the write-up as a whole


def fill(readme_text: str, case_dir: Path) -> str:
    """``readme_text`` with every code and diff block filled from the files of ``case_dir``."""
    pieces, pos = [], 0
    for block in blocks(readme_text):
        try:
            body = render(block, case_dir)
        except SnippetError as e:
            raise SnippetError(f"line {block.line}: {block.marker}: {e}") from None
        pieces += [readme_text[pos:block.start], body]
        pos = block.end
    return "".join(pieces) + readme_text[pos:]


def stale(readme_text: str, case_dir: Path) -> list[tuple[int, str]]:
    """(line, what) for each block that is not what ``fill`` would write, or cannot be filled."""
    try:
        found = blocks(readme_text)
    except SnippetError as e:
        line = int(re.match(r"line (\d+)", str(e)).group(1))
        return [(line, str(e).split(": ", 1)[1])]
    out = []
    for block in found:
        try:
            want = render(block, case_dir)
        except SnippetError as e:
            out.append((block.line, f"{block.marker} cannot be filled: {e}"))
            continue
        have = readme_text[block.start:block.end].strip()
        if have != want.strip():
            what = "is empty" if not have else "is stale: the files have changed since it was filled"
            out.append((block.line, f"the {block.kind} block {block.marker} {what}"))
    return out
