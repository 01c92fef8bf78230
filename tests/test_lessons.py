"""Each fix is the lesson: case files that run on their own, write-up code from the files,
markers on the right lines, and copies that stay copies.

- ``python cases/nrm2-atomics/broken.py`` prints a wrong result beside the reference,
  and fixed.py a matching one (a subprocess, on whatever backend this machine has);
- ``harness.core.snippets``: fill and stale on a synthetic case folder;
- ``harness.core.lessons``: the marker rules, the size of a fix and near-copies, on
  synthetic texts;
- the casebook's own cases as this change left them: every marker on its line, every
  code block fresh, every fix small, every intended copy byte-identical.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.core import lessons, snippets

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "cases"

# The cases this suite holds to the rules (cases added later are checked by `harness check`).
SLUGS = ["add-missing-mask", "attention-seq-tail", "conv2d-channel-mask", "dropout-repeated-mask",
         "fp16-accumulation", "grid-floor-division", "histogram-lost-updates", "inplace-autotune",
         "int32-offset-overflow", "layernorm-padding-variance", "matmul-k-tail", "matmul-tf32-default",
         "noncontiguous-input", "nrm2-atomic-order", "nrm2-atomics", "nrm2-global-sum", "nrm2-race",
         "nrm2-sqrt-per-block", "softmax-mask-fill-zero", "softmax-no-max-subtraction",
         "splitk-matmul-autotune", "sum-reduction-store-race"]
# The write-up says why these fixes are longer than six changed code lines.
LONG_FIXES = {"noncontiguous-input": 8}


# ---------------------------------------------------------------- a case file run as a script


def run_script(path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "PYTHONPATH")}
    return subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, env=env,
                          cwd="/", timeout=600)  # from elsewhere: the footer must find the harness itself


def calls(output: str) -> dict[int, tuple[str, float, float]]:
    """call -> (verdict, result, reference) from the lines standalone prints under its table."""
    pat = re.compile(r"^call (\d+) of \d+: (\S+?),? .*\n  result:\s+(\S+)\n  reference:\s+(\S+)$", re.M)
    return {int(m[1]): (m[2], float(m[3]), float(m[4])) for m in pat.finditer(output)}


@pytest.fixture(scope="module")
def broken_run():
    return run_script(CASES / "nrm2-atomics" / "broken.py", "--trials", "1")


def test_broken_script_prints_a_wrong_result_beside_the_reference(broken_run):
    assert broken_run.returncode == 0, broken_run.stdout + broken_run.stderr
    out = broken_run.stdout
    assert "nrm2-atomics/broken.py" in out
    got = calls(out)
    assert set(got) == {1, 2}, out
    verdict, result, reference = got[1]
    assert verdict == "wrong", out
    assert abs(result - reference) > 1e-3 * abs(reference), out  # autotune's launches piled up
    assert got[2][0] == "ok", out


def test_fixed_script_prints_a_matching_result():
    run = run_script(CASES / "nrm2-atomics" / "fixed.py", "--trials", "1")
    assert run.returncode == 0, run.stdout + run.stderr
    got = calls(run.stdout)
    assert set(got) == {1, 2}, run.stdout
    for verdict, result, reference in got.values():
        assert verdict == "ok", run.stdout
        assert abs(result - reference) <= 1e-4 * abs(reference), run.stdout


def test_script_backend_is_the_best_available(broken_run):
    from harness.run.backends import cuda_available

    want = "gpu" if cuda_available() else "interpreter"
    assert f"backend: {want} (" in broken_run.stdout


def test_every_kernel_file_ends_with_the_runner_footer():
    for slug in SLUGS:
        for name in ("broken.py", "fixed.py", "fast.py"):
            path = CASES / slug / name
            if path.is_file():
                text = path.read_text()
                assert 'if __name__ == "__main__":' in text and "standalone import main" in text, path


# ---------------------------------------------------------------- snippets


BROKEN = '''"""The story."""

import triton


@triton.jit
def k(x_ptr, n):
    y = 1  # BUG: one, not two
    return y


def launch(x):
    return k(x, 1)


if __name__ == "__main__":
    print("run")
'''
FIXED = BROKEN.replace("y = 1  # BUG: one, not two", "y = 2  # FIX: two")


@pytest.fixture
def case_dir(tmp_path):
    (tmp_path / "broken.py").write_text(BROKEN)
    (tmp_path / "fixed.py").write_text(FIXED)
    return tmp_path


README = """# t

## What you would write

<!-- code:broken.py:k,launch -->
<!-- /code -->

## The fix

<!-- diff:broken.py:fixed.py -->
old text
<!-- /diff -->
"""


def test_fill_shows_the_named_functions_without_markers(case_dir):
    out = snippets.fill(README, case_dir)
    code = out.split("<!-- code:broken.py:k,launch -->\n")[1].split("<!-- /code -->")[0]
    assert code.startswith("```python\n@triton.jit\ndef k(x_ptr, n):\n    y = 1\n")
    assert "def launch(x):" in code and "BUG" not in code and "__main__" not in code


def test_fill_writes_the_code_diff_with_real_line_numbers(case_dir):
    out = snippets.fill(README, case_dir)
    diff = out.split("<!-- diff:broken.py:fixed.py -->\n")[1].split("<!-- /diff -->")[0]
    assert "old text" not in diff
    assert diff.startswith("```diff\n--- broken.py\n+++ fixed.py\n@@ -6,4 +6,4 @@\n @triton.jit\n def k(x_ptr, n):\n")
    assert "-    y = 1\n+    y = 2\n" in diff
    assert "FIX" not in diff and "story" not in diff


def test_stale_is_empty_after_fill_and_names_the_block_after_a_change(case_dir):
    assert [line for line, _ in snippets.stale(README, case_dir)] == [5, 10]  # both unfilled
    filled = snippets.fill(README, case_dir)
    assert snippets.stale(filled, case_dir) == []
    assert snippets.fill(filled, case_dir) == filled  # filling twice changes nothing
    (case_dir / "broken.py").write_text(BROKEN.replace("return y", "return y + 0"))
    problems = snippets.stale(filled, case_dir)
    markers = [n for n, line in enumerate(filled.splitlines(), 1) if line.startswith(("<!-- code:", "<!-- diff:"))]
    assert [line for line, _ in problems] == markers and len(markers) == 2
    assert all("stale" in what for _, what in problems)


def test_line_ranges_are_dedented(case_dir):
    assert snippets.code(case_dir, "broken.py:8-9") == "y = 1\nreturn y"


def test_unknown_names_files_and_missing_ends_are_reported(case_dir):
    bad = README.replace("code:broken.py:k,launch", "code:broken.py:nope")
    (line, what), = [p for p in snippets.stale(bad, case_dir) if p[0] == 5]
    assert "defines no top-level 'nope'" in what
    with pytest.raises(snippets.SnippetError, match="line 5"):
        snippets.fill(bad, case_dir)
    missing = README.replace("code:broken.py:k,launch", "code:other.py:k")
    assert "no such file" in snippets.stale(missing, case_dir)[0][1]
    unclosed = README.replace("<!-- /code -->\n", "")
    assert snippets.stale(unclosed, case_dir) == [(5, "<!-- code:broken.py:k,launch --> has no <!-- /code -->")]
    with pytest.raises(snippets.SnippetError):
        snippets.fill(unclosed, case_dir)


def test_a_diff_of_identical_code_is_an_error(case_dir):
    (case_dir / "fixed.py").write_text(BROKEN.replace("# BUG: one, not two", "# NOTE: only a marker differs"))
    with pytest.raises(snippets.SnippetError, match="same code"):
        snippets.diff(case_dir, "broken.py:fixed.py")


# ---------------------------------------------------------------- marker rules


def rules(broken: str, fixed: str) -> list[tuple[str, str, int]]:
    return [(p.rule, p.file, p.line) for p in lessons.marker_problems(broken, fixed)]


def test_clean_markers_have_no_problems():
    assert rules(BROKEN, FIXED) == []


def test_a_bug_marker_on_a_kept_line_is_found():
    broken = BROKEN.replace("return y\n", "return y  # BUG: returns it\n", 1)
    assert rules(broken, FIXED) == [("bug-on-kept-line", "broken.py", 9)]
    noted = BROKEN.replace("return y\n", "return y  # NOTE: returns it\n", 1)
    assert rules(noted, FIXED) == []  # context goes in a NOTE


def test_fix_markers_without_a_reason_are_found():
    for bare in ("# FIX", "# FIX:", "# FIX: ", "# FIX: ..."):
        fixed = FIXED.replace("# FIX: two", bare)
        assert ("fix-without-reason", "fixed.py", 8) in rules(BROKEN, fixed), bare


def test_a_change_without_a_fix_marker_and_a_marked_kept_line_are_found():
    fixed = FIXED.replace("  # FIX: two", "").replace("return y\n", "return y  # FIX: kept\n", 1)
    found = rules(BROKEN, fixed)
    assert ("change-without-fix", "fixed.py", 8) in found
    assert ("fix-on-kept-line", "fixed.py", 9) in found


def test_a_deletion_needs_a_bug_marker():
    broken = BROKEN.replace("def launch(x):\n", "def launch(x):\n    x = x + 0\n")
    assert ("deletion-without-bug", "broken.py", 13) in rules(broken, FIXED)
    marked = broken.replace("x = x + 0\n", "x = x + 0  # BUG: pointless\n")
    assert "deletion-without-bug" not in [r for r, _, _ in rules(marked, FIXED)]


def test_fix_size_counts_changed_code_lines_only():
    assert lessons.fix_size(BROKEN, FIXED) == 1
    fixed = FIXED.replace('"""The story."""', '"""A longer\n\nstory."""').replace("y = 2", "y = 2\n    z = 3")
    assert lessons.changed_lines(BROKEN, fixed) == (1, 2)
    assert lessons.fix_size(BROKEN, fixed) == 2


# ---------------------------------------------------------------- near-copies


CASE_PY = '''"""Inputs shared by the nrm2 cases."""

import torch


def make_inputs(*, device, gen, n):
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    return torch.linalg.vector_norm(x.double())
'''


def test_identical_copies_are_not_reported_and_a_drifted_one_is():
    files = {"a/case.py": CASE_PY, "b/case.py": CASE_PY, "a/broken.py": BROKEN}
    assert lessons.near_copies(files) == []
    files["c/case.py"] = CASE_PY.replace("nrm2 cases", "nrm2-race case")
    found = lessons.near_copies(files)
    assert {(n.a, n.b) for n in found} == {("a/case.py", "c/case.py"), ("b/case.py", "c/case.py")}
    assert all(n.differing == 1 and n.line_a == 1 for n in found)


def test_files_of_one_case_and_different_files_are_not_near_copies():
    files = {"a/broken.py": BROKEN, "a/fixed.py": FIXED, "b/case.py": CASE_PY}
    assert lessons.near_copies(files) == []


# ---------------------------------------------------------------- the casebook itself


@pytest.mark.parametrize("slug", SLUGS)
def test_case_markers_and_fix_size(slug):
    broken, fixed = (CASES / slug / "broken.py").read_text(), (CASES / slug / "fixed.py").read_text()
    assert [str(p) for p in lessons.marker_problems(broken, fixed)] == []
    assert lessons.fix_size(broken, fixed) <= LONG_FIXES.get(slug, 6)


@pytest.mark.parametrize("slug", SLUGS)
def test_case_writeup_code_is_filled_from_the_files(slug):
    readme = (CASES / slug / "README.md").read_text()
    assert "<!-- code:broken.py:" in readme and "<!-- diff:broken.py:fixed.py -->" in readme
    assert snippets.stale(readme, CASES / slug) == []


def test_intended_copies_are_byte_identical():
    nrm2 = ["nrm2-atomic-order", "nrm2-atomics", "nrm2-global-sum", "nrm2-race", "nrm2-sqrt-per-block"]
    assert len({(CASES / s / "case.py").read_text() for s in nrm2}) == 1
    assert (CASES / "nrm2-race" / "fast.py").read_text() == (CASES / "nrm2-atomic-order" / "fast.py").read_text()
    files = {f"{s}/{p.name}": p.read_text() for s in SLUGS for p in (CASES / s).glob("*.py")}
    assert [str(n) for n in lessons.near_copies(files)] == []


def test_code_view_leaves_out_docstring_footer_and_markers():
    view = lessons.code_view(BROKEN)
    assert view[0] == (3, "import triton")
    assert (8, "    y = 1") in view
    assert all("__main__" not in t and "story" not in t for _, t in view)
    assert textwrap.dedent(view[-1][1]) == "return k(x, 1)"
