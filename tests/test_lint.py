"""``harness lint``: every rule on its bad and good snippet, the casebook's own kernels, the registry
and its generated docs, and the public API the probe uses.

The command line (formats, exit codes, noqa, --select/--ignore, SARIF against its schema, the
pre-commit hook) is tested in tests/test_lint_cli.py.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from harness.lint import LintFinding, lint_file, lint_paths, lint_source
from harness.lint.docs import BEGIN, END, generated
from harness.lint.registry import FAMILIES, HIGH, LOW, MEDIUM
from harness.lint.rules import all_rules

REPO = Path(__file__).resolve().parents[1]
RULES = all_rules()
CALIBRATION = {"calibration-looks-racy"}  # a case whose broken.py is correct on purpose


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_fires_on_its_bad_snippet_and_not_on_its_good_one(rule):
    bad = lint_source(rule.bad, "bad.py", select=[rule.code])
    good = lint_source(rule.good, "good.py", select=[rule.code])
    assert [f.code for f in bad] and {f.code for f in bad} == {rule.code}, (rule.code, bad)
    assert good == [], (rule.code, [str(f) for f in good])
    for f in bad:
        assert f.message and f.line >= 1 and f.col >= 1 and f.cases[0] in rule.cases


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_rule_declares_what_the_docs_and_sarif_need(rule):
    assert rule.code[:3] in FAMILIES and rule.name and rule.summary and rule.why
    assert rule.confidence in (HIGH, MEDIUM, LOW) and (rule.confidence != LOW or rule.preview)
    for slug in rule.cases:
        assert (REPO / "cases" / slug / "README.md").is_file(), f"{rule.code} names a case that is not there: {slug}"
    ast.parse(rule.bad), ast.parse(rule.good)


def test_codes_and_names_are_unique_and_the_good_snippets_are_clean_under_every_rule():
    assert len({r.code for r in RULES}) == len(RULES) == len({r.name for r in RULES})
    assert len([r for r in RULES if not r.preview]) >= 15
    for r in RULES:
        noisy = [str(f) for f in lint_source(r.good, "good.py")]
        assert noisy == [], (r.code, noisy)


def test_docs_are_the_registry_as_generated():
    doc = (REPO / "docs" / "lint-rules.md").read_text()
    start, end = doc.index(BEGIN), doc.index(END) + len(END)
    assert doc[start:end] == generated(), "docs/lint-rules.md: paste the output of python -m harness.lint.rules"


def test_each_case_write_up_names_the_lint_rules_that_flag_its_broken_kernel():
    """The line that ends each case's "How to catch it" is generated (python -m harness.lint.rules
    --cases) by linting the case now: a rule that stops flagging it, or a new one, shows here."""
    from harness.lint.docs import CASE_BEGIN, CASE_END, case_block

    for folder in sorted(p for p in (REPO / "cases").iterdir() if (p / "case.toml").is_file()):
        text = (folder / "README.md").read_text()
        assert CASE_BEGIN in text, f"{folder.name}: no lint line: run python -m harness.lint.rules --cases"
        block = text[text.index(CASE_BEGIN):text.index(CASE_END) + len(CASE_END)]
        assert block == case_block(folder), f"{folder.name}: run python -m harness.lint.rules --cases"
        assert text.index("## How to catch it") < text.index(CASE_BEGIN), folder.name


def casebook_findings():
    files = sorted(p for p in (REPO / "cases").glob("*/*.py") if p.name != "case.py" and not p.parent.name.startswith("_"))
    return {p: lint_file(p) for p in files}


def test_the_casebook_no_fixed_kernel_is_flagged_and_at_least_30_broken_ones_are():
    found = casebook_findings()
    flagged_correct = {str(p.relative_to(REPO)): [f.code for f in fs] for p, fs in found.items()
                       if fs and (p.name != "broken.py" or p.parent.name in CALIBRATION)}
    assert flagged_correct == {}
    caught = {p.parent.name for p, fs in found.items() if fs and p.name == "broken.py"}
    assert len(caught) >= 30, sorted(caught)
    for p, fs in found.items():  # each hit names the case it was found in, or a rule from it
        if p.name == "broken.py" and fs:
            assert any(p.parent.name in f.cases for f in fs), (p, [f.code for f in fs])


def test_public_api_for_the_probe(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(RULES[0].bad)
    findings = lint_file(path)
    assert findings and all(isinstance(f, LintFinding) for f in findings)
    f = findings[0]
    assert (f.code, f.line, f.col) == ("TL101", 8, 9) and f.cases == ("add-missing-mask",) + f.cases[1:]
    assert f.confidence == HIGH and "mask" in f.message
    assert str(f).startswith(f"{path}:8:9: TL101 ") and str(f).endswith(
        "[cases/add-missing-mask] (bug: add_kernel is launched on line 12)")
    assert (f.severity, f.reason) == ("bug", "add_kernel is launched on line 12")
    assert lint_file(path, ignore=["TL1"]) == [] and lint_file(path, select=["TL2"]) == []


def test_linting_never_imports_the_code_nor_torch_nor_triton(tmp_path):
    (tmp_path / "k.py").write_text("import triton\nraise SystemExit('imported!')\n" + RULES[0].bad)
    code = (f"import sys\nfrom harness.lint import lint_paths\nr = lint_paths([{str(tmp_path)!r}])\n"
            f"print(len(r.findings), sorted(m for m in ('torch', 'triton') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split() == ["3", "[]"], out.stdout + out.stderr


def test_kernels_under_autotune_heuristics_aliases_and_jit_calls_are_found():
    src = '''
import triton as tr
from triton import language as lang, jit

@tr.heuristics({"EVEN": lambda a: a["n"] % 8 == 0})
@jit
def k1(x_ptr, n, BLOCK: lang.constexpr, EVEN: lang.constexpr):
    offs = lang.program_id(0) * BLOCK + lang.arange(0, BLOCK)
    lang.store(x_ptr + offs, 1.0)

def k2_py(x_ptr, n, BLOCK: lang.constexpr):
    offs = lang.program_id(0) * BLOCK + lang.arange(0, BLOCK)
    lang.store(x_ptr + offs, 1.0)

k2 = tr.jit(k2_py)

def launch(x, n):
    k1[(tr.cdiv(n, 256),)](x, n, BLOCK=256)
    k2[(tr.cdiv(n, 256),)](x, n, BLOCK=256)
'''
    assert [(f.code, f.line) for f in lint_source(src)] == [("TL101", 9), ("TL101", 13)]


def test_a_guard_lint_cannot_read_keeps_it_quiet():
    src = RULES[0].bad.replace("def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):",
                               "def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):")
    src = src.replace("    x = tl.load(x_ptr + offs)\n", "    if EVEN:\n        x = tl.load(x_ptr + offs)\n")
    assert [f.line for f in lint_source(src, select=["TL101"])] == [10, 10]


def test_a_run_over_the_cases_counts_every_file_and_its_own_time(monkeypatch):
    """How fast lint is, per thousand lines, is a benchmark (docs/lint-measurements.md), not a test: a test
    that timed this machine would fail on a busy one. Here the run's seconds are its clock's, a fake one."""
    from types import SimpleNamespace

    from harness.lint import engine

    ticks = iter([100.0, 103.5])  # the run's start and end
    monkeypatch.setattr(engine, "time", SimpleNamespace(perf_counter=lambda: next(ticks)))
    run = lint_paths([str(REPO / "cases")])
    assert run.files >= 129 and run.lines > 4000
    assert run.seconds == 3.5


def test_first_run_precision_is_read_from_every_triaged_hit():
    """The rules table's first-run column counts the triage tables of docs/lint-packages.md: every hit of sets A
    to C (74, 49 false alarms) and E to G (27, 3 false alarms), as that page's summary says; and those of
    docs/lint-first-run.md: sets H to J (10, 5 false alarms), K (6, 6), L (1, 1), M (7, 4), N (8, 8), O (17, 17), P (no hit), Q
    (3, 1), R (16, 2), S (9, 9), T (12, 2), U (6, 4), V (6, 6), W (10, 7), X (2, 1), Y (no hit) and Z (38, 0), as its
    answer table says. Set Y's table of triaged preview hits has no verdict column and is not counted."""
    from harness.lint.docs import FIRST_RUN, first_runs

    runs = first_runs()
    totals = {g: (sum(sum(c.values()) for c in rules.values()), sum(c["false alarm"] for c in rules.values()))
              for g, rules in runs.items()}
    assert totals == {"A to C": (74, 49), "E to G": (27, 3), "H to J": (10, 5), "K": (6, 6), "L": (1, 1), "M": (7, 4), "N": (8, 8), "O": (17, 17), "P": (0, 0), "Q": (3, 1), "R": (16, 2), "S": (9, 9), "T": (12, 2), "U": (6, 4), "V": (6, 6), "W": (10, 7), "X": (2, 1), "Y": (0, 0), "Z": (38, 0)}
    assert {c: dict(v) for c, v in runs["L"].items()} == {"TL703": {"false alarm": 1}}
    assert {c: dict(v) for c, v in runs["M"].items()} == {
        "TL301": {"real bug": 3}, "TL206": {"false alarm": 3}, "TL402": {"false alarm": 1}}
    assert set(runs["E to G"]) == {"TL101", "TL103", "TL203"}
    assert {c: dict(v) for c, v in runs["H to J"].items()} == {
        "TL402": {"latent hazard": 5}, "TL203": {"false alarm": 2}, "TL502": {"false alarm": 2},
        "TL404": {"false alarm": 1}}
    page = FIRST_RUN.read_text()  # the page's own answer row, read rather than retyped
    assert "| **H to J together** | | 17 packages | 293 | 10 | 0 / 5 / 5 |" in page
    assert "| **H to K together** | | 26 packages | 395 | 16 | 0 / 5 / 11 |" in page
    assert "| **H to L together** | | 34 packages | 500 | 17 | 0 / 5 / 12 |" in page
    assert "| **H to M together** | | 41 packages | 673 | 24 | 3 / 5 / 16 |" in page
    assert "| **H to N together** | | 46 packages | 885 | 32 | 3 / 5 / 24 |" in page
    assert "| **H to O together** | | 51 packages | 1,140 | 49 | 3 / 5 / 41 |" in page
    assert "| **H to P together** | | 56 packages | 1,169 | 49 | 3 / 5 / 41 |" in page
    assert "| **H to Q together** | | 61 packages | 1,246 | 52 | 3 / 7 / 42 |" in page
    assert "| **H to R together** | | 77 packages | 1,388 | 68 | 4 / 20 / 44 |" in page
    assert {c: dict(v) for c, v in runs["R"].items()} == {
        "TL101": {"latent hazard": 10, "false alarm": 2}, "TL103": {"latent hazard": 1},
        "TL203": {"real bug": 1}, "TL502": {"latent hazard": 2}}
    assert "| **H to S together** | | 83 packages | 1,502 | 77 | 4 / 20 / 53 |" in page
    assert {c: dict(v) for c, v in runs["S"].items()} == {
        "TL101": {"false alarm": 6}, "TL206": {"false alarm": 2}, "TL306": {"false alarm": 1}}
    assert "| **H to T together** | | 93 packages | 1,586 | 89 | 12 / 22 / 55 |" in page
    assert {c: dict(v) for c, v in runs["T"].items()} == {
        "TL301": {"real bug": 8}, "TL206": {"false alarm": 2}, "TL502": {"latent hazard": 1},
        "TL103": {"latent hazard": 1}}
    assert "| **H to U together** | | 101 packages | 1,779 | 95 | 13 / 23 / 59 |" in page
    assert {c: dict(v) for c, v in runs["U"].items()} == {
        "TL203": {"latent hazard": 1}, "TL103": {"false alarm": 4}, "TL401": {"real bug": 1}}
    assert "| **H to V together** | | 109 packages | 1,973 | 101 | 13 / 23 / 65 |" in page
    assert {c: dict(v) for c, v in runs["V"].items()} == {"TL101": {"false alarm": 4}, "TL404": {"false alarm": 2}}
    assert "| **H to W together** | | 117 packages | 2,069 | 111 | 16 / 23 / 72 |" in page
    assert {c: dict(v) for c, v in runs["W"].items()} == {
        "TL101": {"real bug": 3}, "TL201": {"false alarm": 4}, "TL603": {"false alarm": 2},
        "TL206": {"false alarm": 1}}
    assert "| **H to X together** | | 122 packages | 2,106 | 113 | 16 / 24 / 73 |" in page
    assert {c: dict(v) for c, v in runs["X"].items()} == {"TL102": {"false alarm": 1}, "TL303": {"latent hazard": 1}}
    assert "| **H to Y together** | | 130 packages | 2,158 | 113 | 16 / 24 / 73 |" in page
    assert runs["Y"] == {} and "| Yp1 | fastqml/register_ops.py:39 | TL501 |" in page  # preview rows, not counted
    assert "| **H to Z together** | | 138 packages | 2,241 | 151 | 18 / 60 / 73 |" in page
    assert {c: dict(v) for c, v in runs["Z"].items()} == {
        "TL301": {"real bug": 2, "latent hazard": 2}, "TL703": {"latent hazard": 34}}
    one_more = page.replace("| I6 | flashnn/", "| I7 | x.py:1 | TL404 | false alarm | a test row |\n| I6 | flashnn/", 1)
    assert sum(first_runs({FIRST_RUN: one_more})["H to J"]["TL404"].values()) == 2  # a row added is counted


def test_a_rule_under_the_first_run_threshold_is_preview_unless_a_case_needs_it():
    """Issue 39: a rule under 70 % first-run precision (over every first-run set, with at least 3 hits) moves to
    preview, unless moving it leaves a broken case kernel flagged by no default rule; the rules table says which
    (a rule kept is named there with the cases that need it)."""
    from harness.lint.docs import MIN_HITS, THRESHOLD, first_run_totals, first_runs, needed_by_cases, under_threshold

    runs = first_runs()
    under = under_threshold(runs)
    totals = first_run_totals(runs)
    assert under == {c for c, (right, hits) in totals.items() if hits >= MIN_HITS and right / hits < THRESHOLD}
    kept = needed_by_cases(under)
    preview = {r.code for r in all_rules() if r.preview}
    assert under - set(kept) <= preview, sorted(under - set(kept) - preview)
    assert set(kept).isdisjoint(preview)
    assert "TL105" in under - set(kept)  # 2 of 4: moved, no case kernel is flagged by it alone
    assert kept["TL203"] == ["layernorm-padding-variance"]  # 2 of 4, and the only rule that flags that case
    assert needed_by_cases({"TL101"})["TL101"] == ["add-missing-mask", "attention-seq-tail", "conv2d-channel-mask",
                                                   "matmul-k-tail"]
    assert {v for rules in runs.values() for c in rules.values() for v in c} <= {"real bug", "latent hazard",
                                                                                   "false alarm"}


def test_readme_quotes_the_first_run_figures_of_the_docs_tables():
    """README's lint section quotes the first runs as the triage tables count them: the last group of sets
    (its hits and false alarms) and every set together (hits, real bugs, latent hazards, false alarms)."""
    import re
    from collections import Counter

    from harness.lint.docs import first_runs

    runs = first_runs()
    every = sum((c for rules in runs.values() for c in rules.values()), start=Counter())
    last = list(runs)[-1]
    last_hits = sum(sum(c.values()) for c in runs[last].values())
    last_false = sum(c["false alarm"] for c in runs[last].values())
    text = " ".join((REPO / "README.md").read_text().split())
    assert f"the last set, {last} (" in text
    assert re.search(rf"the last set, {last} \([^)]*\), gave no hit" if last_hits == 0 else
                     rf"the last set, {last} \([^)]*\), gave 1 hit, a false alarm" if last_hits == last_false == 1 else
                     rf"the last set, {last} \([^)]*\), gave {last_hits} hits, all {last_false} false alarms"
                     if last_hits == last_false else
                     rf"the last set, {last} \([^)]*\), gave {last_hits} hits, {last_false} false alarms?", text), text
    total = sum(every.values())
    assert (f"{total} hits: {every['real bug']} real bugs, {every['latent hazard']} latent hazards, "
            f"{every['false alarm']} false alarms ({round(100 * every['false alarm'] / total)} %)") in text
