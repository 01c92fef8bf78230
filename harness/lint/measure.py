"""Measuring ``lint``: ``python -m harness.lint.measure casebook|bugs|timing|packages PATH...``.

Each prints Markdown for docs/lint-measurements.md (and the package hits to triage, for
docs/lint-packages.md). Every rule is run, preview included, and the tables say which are preview.

- ``casebook``: every case's broken.py against its fixed.py (and fast.py): per rule, the broken
  kernels it flags (true: the casebook says they are wrong) and the correct ones it flags (false
  alarms); precision and recall across the casebook. ``calibration-looks-racy``'s broken.py is correct
  on purpose and counts with the correct kernels.
- ``bugs``: the real-bug benchmark. For each entry, the named kernel (``[source] kernel``) in its
  buggy and its fixed version (the released files in the bug cache, or the reproduction's
  ``if FIXED:`` branches): a rule *catches* the bug when it fires on the buggy kernel more often than on
  the fixed one; any finding left on the fixed kernel is a false alarm unless triaged otherwise.
- ``timing``: seconds per thousand lines, linting the casebook and the bug cache.
- ``packages PATH...``: every finding in the folders, one table row to triage by hand.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import time
import tomllib
from collections import Counter
from pathlib import Path

from harness.lint.engine import lint_module, lint_paths, selected
from harness.lint.model import Module

REPO = Path(__file__).resolve().parents[2]
CALIBRATION = {"calibration-looks-racy"}


def all_rules():
    return selected(["ALL"])


def casebook_hits() -> dict[str, dict[str, list]]:
    """case -> {'broken': findings, 'fixed': findings (fixed.py and fast.py together)}."""
    out = {}
    for folder in sorted(p for p in (REPO / "cases").iterdir() if (p / "case.toml").is_file()):
        hits = {"broken": [], "fixed": []}
        for name in ("broken.py", "fixed.py", "fast.py"):
            path = folder / name
            if path.is_file():
                key = "broken" if name == "broken.py" and folder.name not in CALIBRATION else "fixed"
                module = Module(path.read_text(), f"cases/{folder.name}/{name}")
                hits[key] += lint_module(module, all_rules())
        out[folder.name] = hits
    return out


def casebook() -> str:
    hits = casebook_hits()
    traps = [c for c in hits if c not in CALIBRATION]
    lines = ["| rule | confidence | broken kernels flagged | of its own cases | correct kernels flagged | "
             "precision | recall on its cases |", "|---|---|---|---|---|---|---|"]
    for r in all_rules():
        broken = {c for c, h in hits.items() if any(f.code == r.code for f in h["broken"])}
        correct = {c for c, h in hits.items() if any(f.code == r.code for f in h["fixed"])}
        own = [c for c in r.cases if c in hits]
        caught = [c for c in own if c in broken]
        flagged = len(broken) + len(correct)
        precision = f"{len(broken) / flagged:.2f}" if flagged else "-"
        conf = r.confidence + (" (preview)" if r.preview else "")
        lines.append(f"| {r.code} `{r.name}` | {conf} | {len(broken)} | {len(caught)} of {len(own)} | {len(correct)} "
                     f"| {precision} | {len(caught) / len(own):.2f} |")
    default = {r.code for r in selected()}
    summary = []
    for label, codes in (("default rules", default), ("all rules, preview included", {r.code for r in all_rules()})):
        caught = [c for c in traps if any(f.code in codes for f in hits[c]["broken"])]
        false = [c for c, h in hits.items() if any(f.code in codes for f in h["fixed"])]
        summary.append(f"- {label}: {len(caught)} of {len(traps)} broken kernels flagged; correct kernels "
                       f"(fixed.py, fast.py, the calibration case's broken.py) flagged in {len(false)} of "
                       f"{len(hits)} cases" + (f" ({', '.join(false)})" if false else ""))
    missed = [c for c in traps if not any(f.code in default for f in hits[c]["broken"])]
    summary.append(f"- not flagged by the default rules: {', '.join(missed)}")
    return "\n".join(summary + [""] + lines)


def fixed_variant(source: str, fixed: bool) -> str:
    """A reproduction's source with each ``if FIXED:`` (or ``if not FIXED:``) reduced to the branch taken."""
    tree = ast.parse(source)

    class Pick(ast.NodeTransformer):
        def visit_If(self, node):
            self.generic_visit(node)
            test, negate = node.test, False
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, negate = test.operand, True
            if isinstance(test, ast.Name) and test.id == "FIXED":
                return (node.body if fixed != negate else node.orelse) or [ast.Pass()]
            return node

    return ast.unparse(ast.fix_missing_locations(Pick().visit(tree)))


def kernel_findings(source: str, path: str, kernel: str) -> list:
    """The findings inside ``kernel`` and at its launches (all rules)."""
    module = Module(source, path)
    k = module.kernels.get(kernel)
    if k is None:
        return []
    spans = [(k.node.lineno, k.node.end_lineno)] + [(l.node.lineno, l.node.end_lineno) for l in k.launches]
    return [f for f in lint_module(module, all_rules()) if any(a <= f.line <= b for a, b in spans)]


def bug_sources(folder: Path, meta: dict, cache: Path):
    """(variant, path, source) for the entry's buggy and fixed code."""
    if meta.get("kind") == "reproduction":
        source = (folder / "repro.py").read_text()
        for variant in ("buggy", "fixed"):
            yield variant, f"bugs/{folder.name}/repro.py", fixed_variant(source, variant == "fixed")
        return
    for variant in ("buggy", "fixed"):
        base = cache / f"{meta[variant]['package']}-{meta[variant]['version']}"
        for rel in meta["source"].get("files", []):
            if (base / rel).is_file():
                yield variant, f"{base.name}/{rel}", (base / rel).read_text()


def bugs(cache: Path) -> str:
    lines = ["| entry | defect | case | buggy: findings in the kernel | fixed: findings in the kernel | caught by |",
             "|---|---|---|---|---|---|"]
    default = {r.code for r in selected()}
    tally = Counter()
    for folder in sorted(p for p in (REPO / "bugs").iterdir() if (p / "bug.toml").is_file()):
        meta = tomllib.loads((folder / "bug.toml").read_text())
        found = {"buggy": Counter(), "fixed": Counter()}
        for variant, path, source in bug_sources(folder, meta, cache):
            found[variant].update(f.code for f in kernel_findings(source, path, meta["source"]["kernel"]))
        caught = sorted(c for c in found["buggy"] if found["buggy"][c] > found["fixed"][c])
        show = lambda c: ", ".join(f"{k}{'×%d' % n if n > 1 else ''}{'*' if k not in default else ''}"  # noqa: E731
                                   for k, n in sorted(c.items())) or "-"
        lines.append(f"| {folder.name} | {meta.get('defect', '')} | {meta.get('case') or '-'} | {show(found['buggy'])} "
                     f"| {show(found['fixed'])} | {', '.join(caught) or '-'} |")
        tally["entries"] += 1
        tally["caught"] += any(c in default for c in caught)
        tally["caught_all"] += bool(caught)
        tally["fixed_flagged"] += any(c in default for c in found["fixed"])
        tally["fixed_flagged_all"] += bool(found["fixed"])
    head = (f"- default rules: caught {tally['caught']} of {tally['entries']} bugs; a finding left on the fixed "
            f"kernel in {tally['fixed_flagged']} of {tally['entries']}\n- all rules (preview marked *): caught "
            f"{tally['caught_all']}; a finding on the fixed kernel in {tally['fixed_flagged_all']}")
    return head + "\n\n" + "\n".join(lines)


def timing(paths: list[str], repeat: int = 3) -> str:
    """Best of ``repeat`` runs, wall clock and this process's CPU time (the machine may be shared: CPU time
    is what linting costs), with the default rules and with every rule."""
    rows = [f"| what | rules | files | lines | wall s (best of {repeat}) | CPU s | CPU ms per 1,000 lines |",
            "|---|---|---|---|---|---|---|"]
    for path in paths:
        for label, select in (("default", None), ("all", ["ALL"])):
            best = None
            for _ in range(repeat):
                cpu = time.process_time()
                run = lint_paths([path], select)
                cpu = time.process_time() - cpu
                if best is None or cpu < best[1]:
                    best = (run, cpu)
            run, cpu = best
            rows.append(f"| `{os.path.relpath(path, REPO)}` | {label} | {run.files} | {run.lines} | {run.seconds:.2f} | "
                        f"{cpu:.2f} | {1e6 * cpu / max(run.lines, 1):.1f} |")
    return "\n".join(rows)


def packages(paths: list[str]) -> str:
    start = time.perf_counter()
    run = lint_paths(paths, ["ALL"])
    rows = ["| # | file:line | rule | message |", "|---|---|---|---|"]
    for i, f in enumerate(run.findings, 1):
        rows.append(f"| {i} | {f.path}:{f.line} | {f.code}{'*' if f.code not in {r.code for r in selected()} else ''} "
                    f"| {f.message.replace('|', '/')} |")
    kernels = sum(len(Module(p.read_text(), str(p)).kernels) for p in map(Path, _files(paths)))
    return (f"{run.files} files, {run.lines} lines, {kernels} kernels, {len(run.findings)} findings, "
            f"{len(run.errors)} files not linted, {time.perf_counter() - start:.2f} s\n\n" + "\n".join(rows))


def _files(paths):
    for p in paths:
        for root, _, files in os.walk(p):
            for f in files:
                if f.endswith(".py") and "triton" in (text := Path(root, f).read_text(errors="replace")):
                    try:
                        ast.parse(text)
                    except SyntaxError:
                        continue
                    yield os.path.join(root, f)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m harness.lint.measure")
    p.add_argument("what", choices=["casebook", "bugs", "timing", "packages"])
    p.add_argument("paths", nargs="*")
    p.add_argument("--cache", default=os.environ.get("CASEBOOK_BUG_CACHE"),
                   help="the benchmark's cache of released files (default: $CASEBOOK_BUG_CACHE)")
    a = p.parse_args(argv)
    if a.what == "bugs" and not a.cache:
        p.error("bugs: name the benchmark's cache of released files with --cache DIR (or CASEBOOK_BUG_CACHE)")
    if a.what == "casebook":
        print(casebook())
    elif a.what == "bugs":
        print(bugs(Path(a.cache)))
    elif a.what == "timing":
        print(timing(a.paths or [str(REPO / "cases")] + ([a.cache] if a.cache else [])))
    else:
        print(packages(a.paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
