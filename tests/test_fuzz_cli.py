"""Issue 23's fuzz campaign, a sample of each category (``benchmarks/fuzz_cli.py`` runs all of it):
probe files and options that are bad input, a broken Python environment, stdout closed, files
that cannot be written, launchers that leave processes behind, and a bad case or record beside
a healthy one; and issue 42's: probes that check nothing, sanitize runs that end early or end
with pytest's own status, bug entries that could not run, timed signals during record, and lint
beside files it cannot lint. Every invocation is a real ``python -m harness`` process, checked for a
traceback, a wrong exit status, a process alive 5 s after it ended, a half-written file, and
the healthy case missing from the output."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if "fuzz_cli" not in sys.modules:  # (tests/test_interrupts.py loads it too)
    _spec = importlib.util.spec_from_file_location("fuzz_cli", ROOT / "benchmarks" / "fuzz_cli.py")
    sys.modules["fuzz_cli"] = importlib.util.module_from_spec(_spec)  # dataclasses look their module up
    _spec.loader.exec_module(sys.modules["fuzz_cli"])
fuzz_cli = sys.modules["fuzz_cli"]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc for processes left")


@pytest.fixture
def paths(make_case, tmp_path):
    return fuzz_cli.set_up(tmp_path, make_case)


@pytest.mark.parametrize("category", fuzz_cli.CATEGORIES)
def test_a_sample_of_each_category_keeps_the_promise(paths, category):
    sample = [inv for inv in fuzz_cli.campaign(paths, sample=True) if inv.category == category]
    assert sample, f"no invocation of {category}"
    results = [fuzz_cli.run(inv, paths, n) for n, inv in enumerate(sample)]
    bad = [f"{' '.join(r['argv'])[:200]} -> exit {r['code']}: {'; '.join(r['problems'])}\n{r['stderr']}"
           for r in results if r["problems"]]
    assert not bad, "\n\n".join(bad)


def test_the_checks_see_each_problem(tmp_path):
    """The campaign's judge is not blind: a traceback, a wrong status, a process left, a temporary
    file left and a file that does not parse are each reported."""
    inv = fuzz_cli.Invocation("x", "x", ["list"], (2,), shows=("healthy",))
    problems = fuzz_cli.judge(inv, 0, "", "Traceback (most recent call last):\n", [123])
    assert any("traceback" in p for p in problems) and any("exit 0" in p for p in problems)
    assert any("processes left" in p for p in problems) and any("lacks 'healthy'" in p for p in problems)
    before = fuzz_cli.files_under(tmp_path)
    (tmp_path / ".record.json.abc123.tmp").write_text("{")
    (tmp_path / "record.json").write_text('{"cut short')
    found = fuzz_cli.half_written(before, fuzz_cli.files_under(tmp_path))
    assert any("left behind" in p for p in found) and any("does not parse: record.json" in p for p in found)


def test_a_process_with_the_mark_is_found_and_killed():
    import os
    import subprocess

    p = subprocess.Popen(["sleep", "60"], env={**os.environ, fuzz_cli.MARK: "test-mark"})
    try:
        assert fuzz_cli.marked("test-mark") == [p.pid]
        fuzz_cli.LINGER, old = 0.2, fuzz_cli.LINGER
        try:
            assert fuzz_cli.linger("test-mark") == [p.pid]
        finally:
            fuzz_cli.LINGER = old
        assert p.wait(timeout=5) < 0
    finally:
        p.kill()


def test_the_checks_see_issue_42s_problems(tmp_path):
    """A "passed" verdict on an unchecked kernel, a kept file changed and a torn unit are each reported;
    a unit all new or all as it was is not torn."""
    inv = fuzz_cli.Invocation("x", "x", ["probe"], (2,), unchecked=True)
    assert any("passed verdict" in p for p in fuzz_cli.judge(inv, 0, "", "", []))
    assert any("whose it is" in p for p in fuzz_cli.judge(
        fuzz_cli.Invocation("x", "x", ["sanitize"], (2,), own_line="is pytest's own"), 2, "", "ERROR", []))
    files = [tmp_path / n for n in ("README.md", "interpreter.md", "interpreter.json")]
    for f in files:
        f.write_text("--seed 1\n")
    unit = fuzz_cli.Invocation("x", "x", ["record"], (0,), unit=tuple(map(str, files)), unit_mark="--seed 2")
    before = {str(f): f.read_bytes() for f in files}
    assert fuzz_cli.torn(unit, before) == [] and fuzz_cli.unit_state(unit, before) == "untouched"
    files[0].write_text("--seed 2\n")
    assert fuzz_cli.torn(unit, before) and fuzz_cli.unit_state(unit, before) == "torn"
    for f in files:
        f.write_text("--seed 2\n")
    assert fuzz_cli.torn(unit, before) == [] and fuzz_cli.unit_state(unit, before) == "whole"
    assert fuzz_cli.counts([{"problems": ["a torn record: README.md new of 3"], "left": 0}])["torn records"] == 1


LINT_SAMPLE = ("nesting too deep for Python's parser (sarif)", "a FIFO named *.py in the folder (text)",
               "an unreadable folder (sarif)", "a UTF-8 BOM and a latin-1 coding cookie (sarif)",
               "lint '' (its folder, linted, would exit 1) (text)", "a path through a looping link (sarif)")


def test_lints_categories_keep_the_promise(paths):
    """Beside the random sample: a FIFO (a hang), an unreadable folder (as root: the campaign drops root's
    capabilities to read any file), deep nesting, the encodings, ``lint ''`` and a looping link, each still
    linting the file with findings and writing SARIF that parses."""
    by_name = {inv.name: inv for inv in fuzz_cli.campaign(paths, sample=False) if inv.category == "lint"}
    sample = [by_name[n] for n in LINT_SAMPLE if n in by_name]
    left_out = [n for n in LINT_SAMPLE if n not in by_name]
    assert all(any(w in s for s in paths["skipped"]) for n in left_out for w in ("FIFO", "unreadable") if w in n), \
        f"left out without a word: {left_out}"
    results = [fuzz_cli.run(inv, paths, n) for n, inv in enumerate(sample)]
    bad = [f"{r['name']} -> exit {r['code']}: {'; '.join(r['problems'])}\n{r['stderr']}" for r in results if r["problems"]]
    assert not bad, "\n\n".join(bad)


def test_the_checks_see_lints_problems():
    """A hang, SARIF that is not written or does not parse, and a file with findings not linted are each
    reported and counted; SARIF or text that lints the file is not."""
    sarif = fuzz_cli.Invocation("lint", "x", ["lint"], (2,), lints=("trap.py",), sarif=True)
    text = fuzz_cli.Invocation("lint", "x", ["lint"], (2,), lints=("trap.py",))
    said = "error: pipe.py: not a regular file (a FIFO): not read\n"
    assert any(p.startswith("a hang") for p in fuzz_cli.judge(text, "timeout", "", said, []))
    assert any(p.startswith("SARIF not written") for p in fuzz_cli.judge(sarif, 2, "", said, []))
    assert any(p.startswith("SARIF not written") for p in fuzz_cli.judge(sarif, 2, '{"version": "2.1.0"', said, []))
    result = {"locations": [{"physicalLocation": {"artifactLocation": {"uri": "sub/trap.py"}}}]}
    log = {"version": "2.1.0", "runs": [{"results": [result]}]}
    assert fuzz_cli.judge(sarif, 2, json.dumps(log), said, []) == []
    log["runs"][0]["results"] = []
    assert fuzz_cli.judge(sarif, 2, json.dumps(log), said, []) == ["not linted: trap.py"]
    assert fuzz_cli.judge(text, 2, "sub/trap.py:8:9: TL101 tl.load ...\n", said, []) == []
    assert fuzz_cli.judge(text, 2, "0 findings in 0 files\n", said, []) == ["not linted: trap.py"]
    found = fuzz_cli.counts([{"problems": ["a hang: killed after 120 s", "not linted: trap.py",
                                           "SARIF not written or does not parse (JSONDecodeError: x)"], "left": 0}])
    assert found["hangs"] == found["files not linted"] == found["SARIF missing or unparseable"] == 1
