"""Lint installs light (issue 41): ``lint`` and ``--help`` need only the standard library, and the CI recipe
docs/lint-rules.md gives works as written in a virtual environment that holds the project alone (``--no-deps``)."""

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from harness.lint.rules import all_rules

REPO = Path(__file__).resolve().parents[1]
BAD = {r.code: r.bad for r in all_rules()}
HEAVY = ("tabulate", "numpy", "torch", "triton")

# python -c: the CLI with every heavy import refused (a finder first on sys.meta_path), as in a venv without them
BLOCKED = f"""
import importlib.abc, runpy, sys
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in {HEAVY!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (refused by the test)")
sys.meta_path.insert(0, Refuse())
sys.argv = ["harness"] + sys.argv[1:]
runpy.run_module("harness", run_name="__main__", alter_sys=True)
"""


def blocked(*argv, cwd=REPO):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", BLOCKED, *map(str, argv)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_the_refusal_itself_works():
    """The finder does refuse: ``list``, which prints its table with tabulate, fails under it (so the tests
    below can fail)."""
    out = blocked("list")
    assert out.returncode != 0 and "refused by the test" in out.stderr, out.stdout + out.stderr


def test_lint_and_help_run_with_only_the_standard_library(tmp_path):
    (tmp_path / "k.py").write_text(BAD["TL101"])
    out = blocked("--help")
    assert out.returncode == 0 and "lint" in out.stdout and out.stderr == "", out.stderr
    out = blocked("lint", "--help")
    assert out.returncode == 0 and "--format" in out.stdout, out.stderr
    out = blocked("lint", tmp_path / "k.py")
    assert out.returncode == 1 and out.stdout.count(" TL101 ") == 3 and out.stderr == "", out.stdout + out.stderr
    out = blocked("lint", tmp_path, "--format", "sarif")
    assert out.returncode == 1 and len(json.loads(out.stdout)["runs"][0]["results"]) == 3, out.stderr
    out = blocked("lint", "--list")
    assert out.returncode == 0 and "TL101" in out.stdout, out.stderr


def recipe() -> list[str]:
    """The ``run:`` steps of the GitHub Actions workflow docs/lint-rules.md gives, in order."""
    doc = (REPO / "docs" / "lint-rules.md").read_text()
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", doc, re.S) if "upload-sarif" in b]
    assert len(blocks) == 1, "docs/lint-rules.md has no (or more than one) GitHub Actions workflow"
    return [m.group(1).strip() for m in re.finditer(r"^\s*- run: (.*)$", blocks[0], re.M)]


def test_the_ci_recipe_in_the_docs_as_written(tmp_path):
    """A venv with nothing but pip; the recipe's install line with the repository's address replaced by a wheel
    built from this checkout (no network here), then its lint line run by the shell exactly as written."""
    install, step = recipe()
    url = "git+https://github.com/kyolebu/triton-misadventures"
    assert install == f"python -m pip install --no-deps {url}", install
    src, wheels, env_dir, project = (tmp_path / n for n in ("src", "wheels", "venv", "project"))
    src.mkdir()
    for name in ("harness", "pyproject.toml", "README.md"):  # built from a copy: no build/ left in the checkout
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy)(REPO / name, src / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "--no-index", "-w", str(wheels), str(src)], capture_output=True, text=True, timeout=600)
    if built.returncode != 0:
        pytest.skip(f"cannot build a wheel here without the network: {built.stderr.strip()[-300:]}")
    try:
        venv.create(env_dir, with_pip=True, clear=True)
    except Exception as e:  # ensurepip missing (some distributions' pythons)
        pytest.skip(f"cannot make a venv with pip here: {e}")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"
    wheel = next(wheels.glob("*.whl"))
    shell = lambda line: subprocess.run(["bash", "-c", line], cwd=project, env=env, capture_output=True,  # noqa: E731
                                        text=True, timeout=300)
    project.mkdir()
    out = shell(install.replace(url, str(wheel)) + " -q --no-index")
    assert out.returncode == 0, out.stdout + out.stderr
    lacking = shell(f"python -c \"import importlib.util as u; print([m for m in {HEAVY!r} if u.find_spec(m)])\"")
    assert lacking.stdout.strip() == "[]", "the venv must lack the heavy packages: " + lacking.stdout + lacking.stderr
    (project / "kernels.py").write_text(BAD["TL101"])
    out = shell(step)
    assert step.endswith("|| true") and out.returncode == 0
    assert out.stderr == "", out.stderr
    log = json.loads((project / "casebook-lint.sarif").read_text())
    results = log["runs"][0]["results"]
    assert len(results) == 3 and {r["ruleId"] for r in results} == {"TL101"}
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True
    assert shell("triton-casebook --help").returncode == 0
