"""``python -m harness lint`` on the command line: text, JSON and SARIF (validated against the SARIF 2.1.0
schema), exit codes, ``# casebook: noqa``, ``--select``/``--ignore``, files that do not parse, and the
pre-commit hook in a throw-away git repository."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.lint import lint_paths
from harness.lint.rules import all_rules

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "lint_fixtures"
BAD = {r.code: r.bad for r in all_rules()}


def lint(capsys, *argv):
    code = main(["lint", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def files(tmp_path):
    (tmp_path / "bad.py").write_text(BAD["TL101"])
    (tmp_path / "clean.py").write_text(BAD["TL101"].replace("tl.load(x_ptr + offs)", "tl.load(x_ptr + offs, mask=offs < n)")
                                       .replace("tl.store(out_ptr + offs, x + tl.load(y_ptr + offs))",
                                                "tl.store(out_ptr + offs, x, mask=offs < n)"))
    (tmp_path / "notes.py").write_text("print('no kernels here')\n")
    return tmp_path


def test_text_lines_and_exit_1_for_findings(capsys, files):
    code, out, err = lint(capsys, files / "bad.py")
    lines = out.splitlines()
    assert code == 1 and err == ""
    assert lines[0] == (f"{files / 'bad.py'}:8:9: TL101 tl.load of block offsets (tl.arange(0, BLOCK) stepped per "
                        f"program or iteration) with no mask: the last, partial block reads past the end of the "
                        f"tensor [cases/add-missing-mask] (bug: add_kernel is launched on line 12)")
    assert len(lines) == 4 and lines[-1].startswith("3 findings in 1 file (1 files, ")  # and the summary


def test_exit_0_when_clean_and_folders_are_walked(capsys, files):
    (files / "bad.py").unlink()
    hidden = files / ".venv"
    hidden.mkdir()
    (hidden / "k.py").write_text(BAD["TL101"])
    code, out, _ = lint(capsys, files)
    assert code == 0 and out.startswith("0 findings in 0 files (2 files, ")


def test_a_file_that_does_not_parse_is_one_line_and_the_others_are_still_linted(capsys, files):
    (files / "broken.py").write_text("import triton\ndef (:\n")
    code, out, err = lint(capsys, files)
    assert err.splitlines() == [f"error: {files / 'broken.py'}:2: does not parse: invalid syntax"]
    assert code == 2 and out.count(" TL101 ") == 3, "2 wins, and the other files' findings are printed"


def test_bad_input_is_exit_2(capsys, files):
    assert lint(capsys, files / "nope.py")[0] == 2
    code, _, err = lint(capsys, files, "--select", "TL999")
    assert code == 2 and "no lint rule is called TL999" in err
    code, _, err = lint(capsys)
    assert code == 2 and "name at least one file" in err


def test_noqa_bare_and_by_code(capsys, files):
    src = BAD["TL101"]
    src = src.replace("x = tl.load(x_ptr + offs)", "x = tl.load(x_ptr + offs)  # casebook: noqa")
    src = src.replace("tl.store(out_ptr + offs, x + tl.load(y_ptr + offs))",
                      "tl.store(out_ptr + offs, x + tl.load(y_ptr + offs))  # casebook: noqa TL999, TL101")
    (files / "bad.py").write_text(src)
    code, out, _ = lint(capsys, files / "bad.py")
    assert code == 0 and "0 findings" in out
    (files / "bad.py").write_text(src.replace("noqa TL999, TL101", "noqa TL201"))
    code, out, _ = lint(capsys, files / "bad.py")
    assert code == 1 and out.count(" TL101 ") == 2, "a noqa for another code does not silence TL101"


def test_select_and_ignore_by_prefix_and_preview_rules(capsys, files):
    (files / "more.py").write_text(BAD["TL501"] + BAD["TL301"].split("\n", 4)[4])
    assert lint(capsys, files, "--ignore", "TL1,TL3")[0] == 0
    code, out, _ = lint(capsys, files, "--select", "TL3")
    assert code == 1 and {line.split()[1] for line in out.splitlines()[:-1]} == {"TL301"}
    code, out, _ = lint(capsys, files, "--select", "ALL")
    assert {line.split()[1] for line in out.splitlines()[:-1]} == {"TL101", "TL104", "TL301", "TL501", "TL706"}
    code, out, _ = lint(capsys, files, "--select", "int32-pid-offset")
    assert {line.split()[1] for line in out.splitlines()[:-1]} == {"TL501"}


def test_json(capsys, files):
    code, out, _ = lint(capsys, files, "--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["files"] == 3 and len(doc["findings"]) == 3 and doc["errors"] == []
    f = doc["findings"][0]
    assert {"path", "line", "col", "code", "name", "message", "cases", "confidence", "help"} <= set(f)
    assert f["help"].endswith("cases/add-missing-mask/README.md")


def test_sarif_validates_against_the_2_1_0_schema(capsys, files):
    jsonschema = pytest.importorskip("jsonschema")
    (files / "broken.py").write_text("import triton\ndef (:\n")
    code, out, _ = lint(capsys, files, "--format", "sarif", "--select", "ALL")
    log = json.loads(out)
    schema = json.loads((FIXTURES / "sarif-schema-2.1.0.json").read_text())
    jsonschema.validate(log, schema, cls=jsonschema.Draft4Validator, format_checker=jsonschema.FormatChecker())
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    expected = lint_paths([str(files)], ["ALL"]).findings
    assert code == 2 and log["version"] == "2.1.0" and len(run["results"]) == len(expected) >= 3
    assert {r["id"] for r in rules} == {r.code for r in all_rules()}
    assert all(r["helpUri"].startswith("https://") and r["helpUri"].endswith("README.md") for r in rules)
    result = run["results"][0]
    assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == "TL101"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 8
    assert run["invocations"][0]["executionSuccessful"] is False


def hooks() -> list[dict]:
    """.pre-commit-hooks.yaml, read without a YAML library (its shape is a flat list of maps)."""
    out = []
    for line in (REPO / ".pre-commit-hooks.yaml").read_text().splitlines():
        if line.startswith("- "):
            out.append({})
            line = "  " + line[2:]
        if line.startswith("  ") and ":" in line and out:
            key, value = line.strip().split(":", 1)
            out[-1][key] = value.strip().strip('"')
    return out


def test_the_pre_commit_hook_as_pre_commit_runs_it(tmp_path):
    """What pre-commit does for a `language: system` hook on the staged files: entry + the file names."""
    hook = next(h for h in hooks() if h["id"] == "casebook-lint")
    assert hook["language"] == "system" and hook["types"] == "[python]"
    (tmp_path / "k.py").write_text(BAD["TL101"])
    entry = hook["entry"].split()
    cmd = [sys.executable, "-m", "harness", *entry[1:]] if entry[0] == "triton-casebook" else entry
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([*cmd, "k.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "k.py:8:9: TL101 " in out.stdout


@pytest.mark.skipif(shutil.which("pre-commit") is None or shutil.which("triton-casebook") is None,
                    reason="pre-commit (or the triton-casebook script) is not installed here")
def test_the_pre_commit_hook_in_a_test_repository(tmp_path):
    """pre-commit itself, with this repository's hook, in a throw-away git repository."""
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    hook_repo, work = tmp_path / "hooks", tmp_path / "project"
    for folder in (hook_repo, work):
        folder.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=folder, env=env, check=True)
    shutil.copy(REPO / ".pre-commit-hooks.yaml", hook_repo)  # the hook as committed in a repository of its own
    subprocess.run(["git", "add", "."], cwd=hook_repo, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "hooks"], cwd=hook_repo, env=env, check=True)
    run = lambda *a: subprocess.run(a, cwd=work, env=env, capture_output=True, text=True, timeout=120)  # noqa: E731
    (work / "k.py").write_text(BAD["TL101"])
    run("git", "add", "k.py")
    out = run("pre-commit", "try-repo", str(hook_repo), "casebook-lint", "--files", "k.py")
    assert out.returncode == 1 and "k.py:8:9: TL101 " in out.stdout, out.stdout + out.stderr
    (work / "k.py").write_text(BAD["TL101"].replace("tl.load(x_ptr + offs)", "tl.load(x_ptr + offs)  # casebook: noqa")
                               .replace("+ tl.load(y_ptr + offs))", "+ tl.load(y_ptr + offs))  # casebook: noqa"))
    out = run("pre-commit", "try-repo", str(hook_repo), "casebook-lint", "--files", "k.py")
    assert out.returncode == 0, out.stdout + out.stderr
