"""Severity per hit (issue 39 item 2): *bug* when the hit is reachable through a launcher in the file as
written (a high-confidence rule, the kernel launched there), *hazard* when it depends on what lint cannot
see (no launch in the file: the callers pick sizes and configs; a medium-confidence rule). Each finding says
which and why, in text, JSON and SARIF (the result's level), and ``--min-severity bug`` keeps only bugs."""

import json

import pytest

from harness.cli import main
from harness.lint import lint_source
from harness.lint.rules import all_rules

RULES = {r.code: r for r in all_rules()}
LAUNCHED = RULES["TL101"].bad  # add_kernel, launched on line 12 with a cdiv grid
LOOP = """
import triton
import triton.language as tl

@triton.jit
def rowsum_kernel(x_ptr, out_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, N, BLOCK):
        acc += tl.load(x_ptr + row * stride + start + cols)
    tl.store(out_ptr + row, tl.sum(acc))
"""
LOOP_LAUNCHED = LOOP + """
def rowsum(x, out):
    rowsum_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=128)
"""
MEDIUM_RULE = RULES["TL703"].bad  # medium confidence


def test_a_hit_reachable_through_the_launcher_is_a_bug_and_says_where():
    found = lint_source(LAUNCHED)
    assert found and {(f.severity, f.reason) for f in found} == {("bug", "add_kernel is launched on line 12")}


def test_the_same_kernel_with_no_launch_in_the_file_is_a_hazard():
    """A loop to a runtime bound shows the partial tile with or without a launch; only the launch makes it a bug."""
    alone, launched = lint_source(LOOP, select=["TL101"]), lint_source(LOOP_LAUNCHED, select=["TL101"])
    assert [(f.line, f.severity) for f in alone] == [(11, "hazard")]
    assert alone[0].reason == "no launch of this kernel in the file: its callers decide the sizes"
    assert [(f.line, f.severity, f.reason) for f in launched] == [(11, "bug", "rowsum_kernel is launched on line 15")]


def test_medium_confidence_rules_give_hazards():
    found = lint_source(MEDIUM_RULE, select=["TL703"])
    assert found and all(f.severity == "hazard" and "medium-confidence" in f.reason for f in found)


def test_a_hit_at_the_launch_is_a_bug_at_that_launch():
    found = lint_source(RULES["TL303"].bad, select=["TL303"])
    assert found and all(f.severity == "bug" and f.reason == f"at the launch on line {f.line}" for f in found)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "launched.py").write_text(LAUNCHED)
    (tmp_path / "medium.py").write_text(MEDIUM_RULE)
    return tmp_path


def run(capsys, *argv):
    code = main(["lint", *map(str, argv)])
    return code, capsys.readouterr().out


def test_text_json_and_sarif_carry_it(capsys, files):
    code, out = run(capsys, files)
    lines = out.splitlines()
    assert code == 1 and all(l.endswith(")") and (" (bug: " in l or " (hazard: " in l) for l in lines[:-1])
    assert lines[-1].endswith("; 3 bugs, 1 hazard)")
    _, out = run(capsys, files, "--format", "json")
    doc = json.loads(out)["findings"]
    assert {(f["code"], f["severity"]) for f in doc} == {("TL101", "bug"), ("TL703", "hazard")}
    assert all(f["reason"] for f in doc)
    _, out = run(capsys, files, "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert {(r["ruleId"], r["level"], r["properties"]["severity"]) for r in results} == {
        ("TL101", "error", "bug"), ("TL703", "warning", "hazard")}


def test_min_severity_filters_and_sets_the_exit_status(capsys, files):
    code, out = run(capsys, files, "--min-severity", "bug")
    assert code == 1 and out.count(" TL101 ") == 3 and " TL703 " not in out
    code, out = run(capsys, files / "medium.py", "--min-severity", "bug")
    assert code == 0 and out.startswith("0 findings")
    code, out = run(capsys, files / "medium.py", "--min-severity", "hazard")
    assert code == 1 and " TL703 " in out


def test_hits_in_a_launcher_and_on_a_decorator_belong_to_their_launch(capsys):
    """TL304 sits in the launcher's grid (a bug through that launch); TL305 on the autotune decorator, which is
    part of the kernel it decorates: a bug once the file launches that kernel, a hazard before."""
    grid = lint_source(RULES["TL304"].bad, select=["TL304"])
    assert [(f.severity, f.reason) for f in grid] == [("bug", "in transpose, which launches transpose_kernel on line 16")]
    alone = RULES["TL305"].bad
    assert [f.severity for f in lint_source(alone, select=["TL305"])] == ["hazard"]
    launched = alone + "\n\ndef run(x, out):\n    rms_kernel[(x.shape[0],)](x, out, x.shape[0], x.shape[1], x.stride(0))\n"
    found = lint_source(launched, select=["TL305"])
    assert [(f.line, f.severity) for f in found] == [(9, "bug")], [str(f) for f in found]
