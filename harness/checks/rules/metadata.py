"""C2xx, metadata: case.toml is TOML, every field meets the contract, and nothing is left unread.

The field rules (C202 to C205) share one pass of the contract's one validator,
``harness.core.spec.validate`` (``CaseFolder.field_errors``): each reports the errors of
its kind. This module holds no schema of its own: it only places each error on its line.
"""

from __future__ import annotations

import re
from typing import Iterator

from harness.core import spec as contract
from harness.checks.folder import CaseFolder
from harness.checks.problem import ERROR, WARNING, Violation
from harness.checks.registry import rule


def toml_line(text: str, field: str) -> int | None:
    """The line of ``field`` (dotted) in case.toml's text: its key, else its table's header, else its parent's."""
    table_name, lines = "", text.splitlines()
    for i, line in enumerate(lines, 1):
        s = line.strip()
        header = re.match(r"^\[\s*([A-Za-z0-9_.\- ]+?)\s*\]", s)
        if header:
            table_name = header.group(1).replace(" ", "")
            if table_name == field:
                return i
            continue
        key = re.match(r"^([A-Za-z0-9_.\-]+)\s*=", s)
        if key and ".".join(filter(None, (table_name, key.group(1)))) == field:
            return i
    return toml_line(text, field.rsplit(".", 1)[0]) if "." in field else None


def field_findings(case: CaseFolder, kind: str) -> Iterator[Violation]:
    for e in case.field_errors:
        if e.kind == kind:
            yield Violation("case.toml", e.what, e.fix, toml_line(case.text["case.toml"], e.field))


@rule("C201", "toml-syntax", ERROR, why="nothing else in the folder can be checked or run without its metadata")
def toml_syntax(case: CaseFolder) -> Iterator[Violation]:
    """case.toml is not valid TOML."""
    if case.toml_error:
        yield Violation("case.toml", f"is not valid TOML: {case.toml_error}",
                      "fix the syntax; the reference is in CONTRIBUTING.md")


@rule("C202", "field-missing", ERROR, needs=("meta",),
      why="title, category, defect, summary, launcher and [expect] have no default")
def field_missing(case: CaseFolder) -> Iterator[Violation]:
    """A required field of case.toml, or an entry a field requires (a backend, a reason), is missing."""
    yield from field_findings(case, contract.MISSING)


@rule("C203", "field-type", ERROR, needs=("meta",),
      why="the harness reads each field as one type; any other is refused when the case is loaded")
def field_type(case: CaseFolder) -> Iterator[Violation]:
    """A field of case.toml has the wrong type (a number for a string, a value for a table ...)."""
    yield from field_findings(case, contract.TYPE)


@rule("C204", "field-value", ERROR, needs=("meta",),
      why="categories, defects, behaviours and triggers are fixed vocabularies that the report and the "
          "tests count by; numbers have ranges")
def field_value(case: CaseFolder) -> Iterator[Violation]:
    """A field of case.toml has a value outside its vocabulary or range, or disagrees with another field."""
    yield from field_findings(case, contract.VALUE)


@rule("C205", "table-unknown-key", ERROR, needs=("meta",),
      why="a misspelt key in a table would be silently ignored; the contract refuses it")
def table_unknown_key(case: CaseFolder) -> Iterator[Violation]:
    """A table of case.toml ([run], [expect], [compare], [sizes], [bench], [diagnosis]) has a key the contract does not know."""
    yield from field_findings(case, contract.KEY)


@rule("C206", "spec-rejected", ERROR, needs=("meta",),
      why="the harness loads cases with parse_spec; if it refuses a case the validator passed (a fault in "
          "the harness), the case would not run and nothing else would say why")
def spec_rejected(case: CaseFolder) -> Iterator[Violation]:
    """parse_spec refuses case.toml for a reason none of the field rules reported."""
    if case.spec is None and case.spec_error and not case.field_errors:
        yield Violation("case.toml", case.spec_error, "see the case.toml reference in CONTRIBUTING.md; "
                      "if it is right, report that check misses this")


@rule("C207", "unknown-field", WARNING, needs=("meta",),
      why="a field the harness does not read is usually a misspelt one whose value is silently lost")
def unknown_field(case: CaseFolder) -> Iterator[Violation]:
    """case.toml has a top-level field the harness does not read."""
    for key in sorted(set(case.meta) - set(contract.FIELDS)):
        yield Violation("case.toml", f"unknown field '{key}'",
                      f"the harness reads only {', '.join(sorted(contract.FIELDS))}",
                      toml_line(case.text["case.toml"], key))


@rule("C208", "seen-in-empty", WARNING, needs=("meta",),
      why="a misadventure is a trap someone really fell into; the links are the evidence")
def seen_in_empty(case: CaseFolder) -> Iterator[Violation]:
    """seen_in lists no real occurrence."""
    if case.meta.get("seen_in") == []:
        yield Violation("case.toml", "seen_in lists no real occurrence",
                      "link the issue, commit or thread where this trap was met",
                      toml_line(case.text["case.toml"], "seen_in"))
