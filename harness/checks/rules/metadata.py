"""C2xx, metadata: case.toml is TOML, every field meets the contract, and nothing is left unread.

The field rules (C202 to C205) share one pass over the parsed dict
(``CaseFolder.field_errors``): each reports the errors of its kind.
"""

from __future__ import annotations

from typing import Iterator

from harness.checks import metadata
from harness.checks.folder import CaseFolder
from harness.checks.problem import ERROR, WARNING, Violation
from harness.checks.registry import rule


def field_findings(case: CaseFolder, kind: str) -> Iterator[Violation]:
    for e in case.field_errors:
        if e.kind == kind:
            yield Violation("case.toml", e.what, e.fix, metadata.toml_line(case.text["case.toml"], e.field))


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
    yield from field_findings(case, metadata.MISSING)


@rule("C203", "field-type", ERROR, needs=("meta",),
      why="the harness reads each field as one type; any other is refused when the case is loaded")
def field_type(case: CaseFolder) -> Iterator[Violation]:
    """A field of case.toml has the wrong type (a number for a string, a value for a table ...)."""
    yield from field_findings(case, metadata.TYPE)


@rule("C204", "field-value", ERROR, needs=("meta",),
      why="categories, defects, behaviours and triggers are fixed vocabularies that the report and the "
          "tests count by; numbers have ranges")
def field_value(case: CaseFolder) -> Iterator[Violation]:
    """A field of case.toml has a value outside its vocabulary or range, or disagrees with another field."""
    yield from field_findings(case, metadata.VALUE)


@rule("C205", "table-unknown-key", ERROR, needs=("meta",),
      why="a misspelt key in [run], [expect] or [sizes] would be silently ignored; the contract refuses it")
def table_unknown_key(case: CaseFolder) -> Iterator[Violation]:
    """A table of case.toml ([run], [expect], [sizes]) has a key the contract does not know."""
    yield from field_findings(case, metadata.KEY)


@rule("C206", "spec-rejected", ERROR, needs=("meta",),
      why="the harness loads cases with parse_spec; if it refuses a case the field rules passed, the case "
          "would not run and nothing else would say why")
def spec_rejected(case: CaseFolder) -> Iterator[Violation]:
    """parse_spec refuses case.toml for a reason none of the field rules reported."""
    if case.spec is None and case.spec_error and not case.field_errors:
        yield Violation("case.toml", case.spec_error, "see the case.toml reference in CONTRIBUTING.md; "
                      "if it is right, report that check misses this")


@rule("C207", "unknown-field", WARNING, needs=("meta",),
      why="a field the harness does not read is usually a misspelt one whose value is silently lost")
def unknown_field(case: CaseFolder) -> Iterator[Violation]:
    """case.toml has a top-level field the harness does not read."""
    for key in sorted(set(case.meta) - metadata.KNOWN_KEYS):
        yield Violation("case.toml", f"unknown field '{key}'",
                      f"the harness reads only {', '.join(sorted(metadata.KNOWN_KEYS))}",
                      metadata.toml_line(case.text["case.toml"], key))


@rule("C208", "seen-in-empty", WARNING, needs=("meta",),
      why="a misadventure is a trap someone really fell into; the links are the evidence")
def seen_in_empty(case: CaseFolder) -> Iterator[Violation]:
    """seen_in lists no real occurrence."""
    if case.meta.get("seen_in") == []:
        yield Violation("case.toml", "seen_in lists no real occurrence",
                      "link the issue, commit or thread where this trap was met",
                      metadata.toml_line(case.text["case.toml"], "seen_in"))
