"""Every rule of ``check``, one module per family; importing this package registers them all.

========  ===============  ======================================================================
family    module           checks
========  ===============  ======================================================================
C1xx      files            the five files are there, readable, parse, define the launcher
C2xx      metadata         case.toml: TOML, every field, no unread field, seen_in
C3xx      writeup          README.md: sections, diff, markers, title, summary table, code blocks
C4xx      markers          no TODO; '# BUG:' and '# FIX:' markers on the lines the fix changes
C5xx      records          recorded/gpu.json: there, as declared, fresh; recorded blocks
C6xx      interpreter      the run under TRITON_INTERPRET=1 behaves as declared
C7xx      slug             a well-formed, unique name and title
C8xx      copies           a file copied from another case has not drifted from it
========  ===============  ======================================================================

docs/check-rules.md lists every rule; ``python -m harness.checks.rules`` prints the table.
"""

from __future__ import annotations

from harness.checks.registry import CRASHED, RULES, Rule
from harness.checks.rules import copies, files, interpreter, markers, metadata, records, slug, writeup  # noqa: F401


def all_rules() -> list[Rule]:
    """Every rule, in code order (C901, the engine's own, last)."""
    return sorted(RULES, key=lambda r: r.code) + [CRASHED]


def cell(text: str) -> str:
    """``text`` as one Markdown table cell."""
    return text.replace("|", "\\|")


def table() -> str:
    """The rules as a Markdown table: code, name, level, what it checks, why."""
    rows = ["| code | name | level | what it checks | why |", "|---|---|---|---|---|"]
    rows += [f"| {r.code} | `{r.name}` | {r.level} | {cell(r.what)} | {cell(r.why)} |" for r in all_rules()]
    return "\n".join(rows)
