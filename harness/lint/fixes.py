"""``lint --fix`` / ``--diff``: the mechanical, safe fixes, as text edits a rule attaches to its hit.

A rule yields ``(node, message, case, Fix(...))``; the fix is a list of edits of the file's text, each
``(line, col, end_line, end_col, text)`` in ``ast``'s coordinates (1-based lines, 0-based UTF-8 byte columns),
built here from the nodes:

- ``other=`` on a masked load whose value a max or min reduces: the reduction's neutral element
  (TL201, TL202);
- ``reset_to_zero=`` / ``restore_value=`` on the ``@triton.autotune`` of a kernel that accumulates or
  updates in place (TL301, TL302): the list extended when it is there;
- ``.to(tl.int64)`` on the program-id side of an int32 product (TL501);
- ``input_precision="ieee"`` on a ``tl.dot`` (TL601, a preview rule: only when asked for with --select).

``harness/lint/fixing.py`` applies them (``lint --fix``, ``--diff``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

Edit = tuple  # (line, col, end_line, end_col, text)


@dataclass(frozen=True)
class Fix:
    description: str
    edits: tuple[Edit, ...]


def insert_keyword(call: ast.Call, name: str, value: str, description: str, index: int | None = None) -> Fix:
    """``name=value`` added to ``call`` (its value replaced where it is given, by keyword or at position
    ``index``)."""
    for k in call.keywords:
        if k.arg == name:
            return Fix(description, (span(k.value, value),))
    if index is not None and len(call.args) > index:
        return Fix(description, (span(call.args[index], value),))
    last = max(list(call.args) + [k.value for k in call.keywords], key=lambda n: (n.end_lineno, n.end_col_offset),
               default=None)
    if last is None:  # f(): the text between the parentheses
        return Fix(description, ((call.end_lineno, call.end_col_offset - 1, call.end_lineno, call.end_col_offset - 1,
                                  f"{name}={value}"),))
    return Fix(description, ((last.end_lineno, last.end_col_offset, last.end_lineno, last.end_col_offset,
                              f", {name}={value}"),))


def span(node: ast.AST, text: str) -> Edit:
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset, text


def autotune_names(autotune_call: ast.Call, keyword: str, name: str) -> Fix | None:
    """``keyword=[..., name]`` on ``@triton.autotune(...)``: added, or the literal list extended in place."""
    what = f'{keyword}=["{name}"] on @triton.autotune'
    for k in autotune_call.keywords:
        if k.arg == keyword and isinstance(k.value, (ast.List, ast.Tuple)) and k.value.elts:
            last = k.value.elts[-1]
            return Fix(what, ((last.end_lineno, last.end_col_offset, last.end_lineno, last.end_col_offset,
                               f', "{name}"'),))
        if k.arg == keyword and isinstance(k.value, (ast.List, ast.Tuple)):
            return Fix(what, (span(k.value, f'["{name}"]'),))
        if k.arg == keyword and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str):
            return Fix(what, (span(k.value, f'["{k.value.value}", "{name}"]'),))
        if k.arg == keyword:
            return None  # something lint cannot extend as text (a name, a call)
    return insert_keyword(autotune_call, keyword, f'["{name}"]', what)


def int64(node: ast.AST, tl: str) -> Fix:
    """``node`` cast to int64 where it stands."""
    text = ast.unparse(node)
    simple = isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call))
    return Fix(f"{text}.to({tl}.int64)", (span(node, f"{text if simple else f'({text})'}.to({tl}.int64)"),))


def apply(source: str, edits: tuple[Edit, ...]) -> str:
    """``source`` with ``edits`` made (they must not overlap), last first so that positions hold."""
    lines = source.splitlines(keepends=True)
    data = [line.encode("utf-8") for line in lines]
    for line, col, end_line, end_col, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        head = data[line - 1][:col]
        tail = data[end_line - 1][end_col:]
        data[line - 1:end_line] = [head + text.encode("utf-8") + tail]
    return b"".join(data).decode("utf-8")
