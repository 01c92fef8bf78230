"""The three output formats of ``lint``: text (one line per finding), JSON, and SARIF 2.1.0.

SARIF is what GitHub code scanning reads (``github/codeql-action/upload-sarif``): one run, the tool's
rules (each with its help text and a helpUri to the case write-up), and one result per finding with
its physical location. Files that could not be linted are tool execution notifications.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from harness.lint.engine import LintRun, help_uri
from harness.lint.registry import BUG, HAZARD, HIGH, MEDIUM

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVEL = {HIGH: "error", MEDIUM: "warning"}  # a rule's default, by confidence; low: "note"
SEVERITY_LEVEL = {BUG: "error", HAZARD: "warning"}  # a result's level, by its severity


def uri(path: str) -> str:
    """A path as a SARIF ``uri-reference`` (RFC 3986): an absolute path a ``file://`` URI, a relative one
    percent-encoded (spaces, ``%``, non-ASCII as UTF-8), so that it reads back as the same path."""
    if os.path.isabs(path):
        return Path(path).as_uri()
    return quote(path.replace(os.sep, "/"), safe="/")


def text(run: LintRun) -> str:
    lines = [str(f) for f in run.findings]
    files = len({f.path for f in run.findings})
    bugs = sum(f.severity == BUG for f in run.findings)
    lines.append(f"{len(run.findings)} finding{'s' * (len(run.findings) != 1)} in {files} file{'s' * (files != 1)} "
                 f"({run.files} files, {run.lines} lines linted in {run.seconds:.2f} s; {bugs} bug{'s' * (bugs != 1)}, "
                 f"{len(run.findings) - bugs} hazard{'s' * (len(run.findings) - bugs != 1)})")
    return "\n".join(lines)


def as_json(run: LintRun) -> str:
    return json.dumps({
        "findings": [f.as_dict() for f in run.findings],
        "errors": [{"path": e.path, "message": e.message} for e in run.errors],
        "files": run.files, "lines": run.lines, "seconds": round(run.seconds, 3),
        "rules": [r.code for r in run.rules],
    }, indent=2)


def sarif(run: LintRun, version: str = "0.1.0") -> str:
    rules = sorted({f.code: f for f in run.findings}.keys() | {r.code for r in run.rules})
    by_code = {r.code: r for r in run.rules}
    from harness.lint.registry import RULES
    by_code.update({r.code: r for r in RULES if r.code in rules and r.code not in by_code})
    index = {code: i for i, code in enumerate(rules)}
    descriptors = [{
        "id": r.code, "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.why or r.summary},
        "helpUri": help_uri(r.cases),
        "help": {"text": f"{r.why} Cases: {', '.join(r.cases)}.",
                 "markdown": f"{r.why}\n\nCases: " + ", ".join(f"[{c}]({help_uri((c,))})" for c in r.cases)},
        "defaultConfiguration": {"level": LEVEL.get(r.confidence, "note"), "enabled": not r.preview},
        "properties": {"confidence": r.confidence, "family": r.family, "cases": list(r.cases),
                       "tags": ["triton", "correctness", r.family]},
    } for r in (by_code[c] for c in rules)]
    results = [{
        "ruleId": f.code, "ruleIndex": index[f.code],
        "level": SEVERITY_LEVEL.get(f.severity, "note"),
        "message": {"text": f"{f.message} [cases/{f.cases[0]}]"},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": uri(f.path)},
            "region": {"startLine": f.line, "startColumn": f.col,
                       **({"endLine": f.end_line, "endColumn": f.end_col} if f.end_line else {})},
        }}],
        "properties": {"confidence": f.confidence, "cases": list(f.cases), "severity": f.severity,
                       "reason": f.reason},
    } for f in run.findings]
    notes = [{"level": "error", "message": {"text": f"{e.path}: {e.message}"}} for e in run.errors]
    log = {
        "$schema": SARIF_SCHEMA, "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "triton-casebook-lint", "version": version,
                                "informationUri": help_uri(()), "rules": descriptors}},
            "invocations": [{"executionSuccessful": not run.errors, "toolExecutionNotifications": notes}],
            "results": results,
        }],
    }
    return json.dumps(log, indent=2)


FORMATS = {"text": text, "json": as_json, "sarif": sarif}
