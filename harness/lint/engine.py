"""Run the rules over files: ``lint_file(path)``, ``lint_source(text)``, ``lint_paths(paths)``.

A finding on a line that says ``# casebook: noqa`` (every rule) or ``# casebook: noqa TL101,TL203``
(those rules) is dropped; the comment may sit on the line the finding names or on the
last line of the statement it is in. A file that cannot be read or parsed is one
``LintError``; the other files are still linted. A rule that raises is one ``LintError``
naming it, and the file's other rules still run.
"""

from __future__ import annotations

import ast
import os
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.lint import rules as _rules  # noqa: F401  (registers every rule)
from harness.lint.files import MAX_BYTES, Unreadable, display, python_files, read_source
from harness.lint.fixes import Fix
from harness.lint.model import Module, parse
from harness.lint.project import pair_launches
from harness.lint.registry import BUG, HAZARD, HIGH, RULES, SEVERITIES, Rule, Severity

CASES_URL = os.environ.get("CASEBOOK_DOCS_URL", "https://github.com/kyolebu/triton-misadventures/blob/main/")
NOQA = re.compile(r"#\s*casebook:\s*noqa\b(?::?\s*(?P<codes>[A-Z]{2}\d{3}(?:\s*,\s*[A-Z]{2}\d{3})*))?")


@dataclass
class LintFinding:
    path: str
    line: int
    col: int  # 1-based, as editors count
    code: str
    name: str
    message: str
    cases: tuple[str, ...]
    confidence: str
    end_line: int | None = None
    end_col: int | None = None
    severity: str = HAZARD  # bug: wrong through the launcher as written; hazard: for some sizes, configs, callers
    reason: str = ""  # why that severity, a few words
    fix: Fix | None = None  # the mechanical fix (lint --fix), where the rule has one

    def __str__(self) -> str:
        return (f"{self.path}:{self.line}:{self.col}: {self.code} {self.message} [cases/{self.cases[0]}] "
                f"({self.severity}: {self.reason})")

    def as_dict(self) -> dict:
        d = asdict(self)
        d["cases"] = list(self.cases)
        d["help"] = help_uri(self.cases)
        d["fix"] = self.fix.description if self.fix else None
        return d


@dataclass
class LintError:
    path: str
    message: str

    def __str__(self) -> str:
        return f"error: {self.path}: {self.message}"


@dataclass
class LintRun:
    findings: list[LintFinding] = field(default_factory=list)
    errors: list[LintError] = field(default_factory=list)
    files: int = 0
    lines: int = 0
    seconds: float = 0.0
    rules: list[Rule] = field(default_factory=list)


def help_uri(cases: tuple[str, ...]) -> str:
    return f"{CASES_URL}cases/{cases[0]}/README.md" if cases else f"{CASES_URL}docs/lint-rules.md"


def selected(select: list[str] | None = None, ignore: list[str] | None = None) -> list[Rule]:
    """The rules that run: every non-preview rule, or those ``select`` names by code prefix
    (``ALL`` is every rule, preview included), less those ``ignore`` names."""
    def named(r: Rule, prefixes) -> bool:
        return any(p == "ALL" or r.code.startswith(p) or r.name == p for p in prefixes)

    chosen = [r for r in RULES if named(r, select)] if select else [r for r in RULES if not r.preview]
    return sorted((r for r in chosen if not (ignore and named(r, ignore))), key=lambda r: r.code)


def unknown_codes(names: list[str]) -> list[str]:
    """The names in ``--select``/``--ignore`` that match no rule."""
    return [p for p in names if p != "ALL" and not any(r.code.startswith(p) or r.name == p for r in RULES)]


def suppressed(lines: list[str], finding: LintFinding) -> bool:
    for number in {finding.line, finding.end_line or finding.line}:
        if 0 < number <= len(lines):
            m = NOQA.search(lines[number - 1])
            if m and (not m.group("codes") or finding.code in re.split(r"\s*,\s*", m.group("codes"))):
                return True
    return False


# The data flow follows names through their assignments recursively, one Python frame or three per step, and a
# generated kernel can chain hundreds of them (``a, b = b, a + b`` line after line): deeper than Python's default
# 1,000 frames. Since 3.11 a Python-to-Python call takes no C stack, so a higher limit only lets the walk finish.
RECURSION_LIMIT = 100_000


def lint_module(module: Module, rules: list[Rule], errors: list[LintError] | None = None) -> list[LintFinding]:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        return _lint_module(module, rules, errors)
    finally:
        sys.setrecursionlimit(limit)


def _lint_module(module: Module, rules: list[Rule], errors: list[LintError] | None = None) -> list[LintFinding]:
    out, seen = [], set()
    for r in rules:
        try:
            hits = list(r.check(module))
        except Exception as e:  # a rule must never take the others down with it
            if errors is None:
                raise
            errors.append(LintError(module.path, f"rule {r.code} ({r.name}) crashed: {type(e).__name__}: {e}"))
            continue
        for node, message, *extra in hits:  # a hit may name the one case it is most like, and its severity
            case = [e for e in extra if isinstance(e, str)]
            given = next((e for e in extra if isinstance(e, Severity)), None) or severity(module, r, node)
            fix = next((e for e in extra if isinstance(e, Fix)), None)
            cases = tuple(case) + tuple(c for c in r.cases if c not in case)
            home = module.home_of(node)  # a launch in another file of a kernel of this one: that file's hit
            f = LintFinding(home.path, node.lineno, node.col_offset + 1, r.code, r.name, message, cases,
                            r.confidence, getattr(node, "end_lineno", None), (getattr(node, "end_col_offset", 0) or 0) + 1,
                            given.kind, given.reason, fix)
            if (f.path, f.line, f.col, f.code) not in seen and not suppressed(home.lines, f):
                seen.add((f.path, f.line, f.col, f.code))
                out.append(f)
    return sorted(out, key=lambda f: (f.path != module.path, f.path, f.line, f.col, f.code))


def severity(module: Module, rule: Rule, node: ast.AST) -> Severity:
    """A hit's severity when its rule does not say: *bug* for a high-confidence rule whose kernel this file
    launches (the hit is reachable through the launcher as written, at some size); *hazard* when no launch
    is in the file (its callers decide the sizes and configs) or the rule is of medium or low confidence
    (the pattern is usually wrong, and correct uses exist that lint cannot tell apart)."""
    if rule.confidence != HIGH:
        return Severity(HAZARD, f"{rule.confidence}-confidence rule: correct uses of the pattern exist")
    line = getattr(node, "lineno", 0)
    home = module.home_of(node)
    if home is not module:  # in another file's launcher of a kernel here
        mine = [l for l in module.launches if l.home is home]
        launch = next((l for l in mine if l.node.lineno <= line <= (l.node.end_lineno or line)), None) or next(
            l for l in mine if l.launcher is not None and l.launcher.lineno <= line <= (l.launcher.end_lineno or line))
        return Severity(BUG, f"in {launch.launcher.name if launch.launcher else 'the module'}, which launches "
                             f"{launch.kernel.name} on line {launch.node.lineno}")
    for launch in [l for l in module.launches if l.home is None]:
        if launch.node.lineno <= line <= (launch.node.end_lineno or launch.node.lineno):
            return Severity(BUG, f"at the launch on line {launch.node.lineno}")
    kernel = next((k for k in module.kernels.values() if min([k.node.lineno] + [d.lineno for d in k.node.decorator_list])
                   <= line <= (k.node.end_lineno or line)), None)  # the decorators too: an autotune's key
    if kernel is None:  # in a launcher: reachable when that function launches
        launch = next((l for l in module.launches if l.home is None and l.launcher is not None and
                       l.launcher.lineno <= line <= (l.launcher.end_lineno or line)), None)
        if launch is not None:
            return Severity(BUG, f"in {launch.launcher.name}, which launches {launch.kernel.name} on line "
                                 f"{launch.node.lineno}")
    if kernel is None or not kernel.launches:
        return Severity(HAZARD, "no launch of this kernel in the file: its callers decide the sizes")
    first = kernel.launches[0]
    where = f" of {first.home.path}" if first.home is not None else ""
    return Severity(BUG, f"{kernel.name} is launched on line {first.node.lineno}{where}")


def at_least(findings: list[LintFinding], minimum: str) -> list[LintFinding]:
    """The findings whose severity is ``minimum`` or more (``SEVERITIES``, least first)."""
    return [f for f in findings if SEVERITIES.index(f.severity) >= SEVERITIES.index(minimum)]


def lint_source(source: str, path: str = "<string>", select=None, ignore=None) -> list[LintFinding]:
    """The findings in ``source`` (raises SyntaxError if it does not parse)."""
    return lint_module(Module(source, path), selected(select, ignore))


def lint_file(path, select=None, ignore=None) -> list[LintFinding]:
    """The findings in one file: the public API the probe uses. Raises OSError, UnicodeDecodeError
    or SyntaxError for a file that cannot be linted."""
    path = Path(path)
    try:
        text = read_source(path, max_bytes=None)
    except Unreadable as e:
        raise OSError(f"{path}: {e}") from None
    return lint_source(text, str(path), select, ignore)


def parse_error(e: Exception) -> tuple[str, str]:
    """(":line" or "", why) for what ``model.parse`` raised."""
    where = f":{e.lineno}" if getattr(e, "lineno", None) else ""
    return where, f"does not parse: {getattr(e, 'msg', None) or e}"


def lint_paths(paths: list[str], select=None, ignore=None, max_bytes: int = MAX_BYTES,
               min_severity: str = HAZARD) -> LintRun:
    """Lint every Python file in ``paths``, each on its own: a file that cannot be read, decoded, parsed or
    analysed is one ``LintError`` and the others are still linted. A file that does not mention triton is
    parsed (a file that does not parse is always said) but not analysed."""
    run = LintRun(rules=selected(select, ignore))
    start = time.perf_counter()
    modules: list[tuple[Path, Module]] = []
    for path in python_files(paths, lambda p, message: run.errors.append(LintError(display(Path(p)), message))):
        shown = display(path)
        try:
            module = read_one(path, shown, run, max_bytes)
        except Unreadable as e:
            run.errors.append(LintError(shown, str(e)))
        except Exception as e:  # lint's own failure on this file: said, and the next file is linted
            run.errors.append(LintError(shown, f"lint failed on this file: {type(e).__name__}: {e}"))
        else:
            if module is not None:
                modules.append((path, module))
    try:
        pair_launches(modules)
    except Exception as e:  # pairing across files is a refinement: the files are still linted each on its own
        run.errors.append(LintError(display(Path(paths[0])) if paths else "", f"launches across files not paired: "
                                    f"{type(e).__name__}: {e}"))
    for _, module in modules:
        if "triton" not in module.source:  # read only for the launches it may hold
            continue
        try:
            run.findings += lint_module(module, run.rules, run.errors)
        except Exception as e:  # lint's own failure on this file: said, and the next file is linted
            run.errors.append(LintError(module.path, f"lint failed on this file: {type(e).__name__}: {e}"))
    run.findings = at_least(run.findings, min_severity)
    run.seconds = time.perf_counter() - start
    return run


def read_one(path: Path, shown: str, run: LintRun, max_bytes: int) -> Module | None:
    """The file read and parsed (a file that does not parse is one error); its ``Module`` when it mentions
    triton or may launch a kernel imported from another file (``](`` in it), else None."""
    text = read_source(path, max_bytes)
    try:
        module = Module(text, shown) if "triton" in text or "](" in text and "import" in text else parse(text, shown)
    except (SyntaxError, ValueError) as e:
        where, message = parse_error(e)
        run.errors.append(LintError(shown + where, message))
        return None
    run.files += 1
    run.lines += text.count("\n") + (not text.endswith("\n") and bool(text))
    return module if isinstance(module, Module) else None
