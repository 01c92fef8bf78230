"""The README's commands run as written (issue 41): every command in its shell code blocks (and the
``$ `` lines of its output blocks) is listed here, either as cheap, run on the CPU with the exit
status it documents, or as skipped, with why (a GPU, the network, minutes, a file it rewrites).
A command added to the README and to neither list fails the test, so each new one is weighed.

"As written": the words are the README's; ``python`` and ``pytest`` are this interpreter (the
README's ``python`` is whatever Python has the casebook installed). A command that names a file of
the user's (``my_kernels.py``, ``tests/``) runs in a folder that has one: a kernel with a missing
mask, a copy of tests/sanitize_fixtures. The inline ``--help`` and ``list`` run too.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# command as written -> (where it runs, the exit statuses the README documents for it there)
# "repo": the repository's root; "user": a folder with the user's files the command names
CHEAP = {
    "python -m harness case nrm2-atomics": ("repo", {0}),
    "python -m harness probe examples/rownorm/probe_rownorm.py": ("repo", {1}),  # `launch`: the unmasked kernel
    "python -m harness probe cases/nrm2-race/broken.py --inputs cases/nrm2-race/case.py --launcher nrm2":
        ("repo", {1}),  # the race is found
    "python -m harness lint my_kernels.py": ("user", {1}),  # the missing mask is a finding
    "python -m harness lint src/ --format sarif": ("user", {1}),
    "python -m harness sanitize pytest tests/": ("user", {1}),  # the fixture suite's out-of-bounds add
    "python -m harness sanitize my_script.py --its-args": ("user", {0}),
    "pytest --casebook-sanitize tests/": ("user", {1}),
    "python -m harness bugs --list": ("repo", {0}),
}
# on a machine without a GPU: the one line and exit 2 it documents (with a GPU these are not cheap)
GPU_ONLY = {
    "python -m harness case nrm2-atomics --backend gpu --trials 3 --seed 0": "the recorded GPU table",
}
SKIPPED = {
    "python -m pip install -e . -c constraints.txt": "installs from the network, minutes; CI's first step runs it",
    "python -m pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu":
        "downloads torch, minutes; CI's machine has it",
    "python -m pip install -e '.[ray]' -c constraints.txt": "installs Ray from the network; CI's second step runs it",
    "python -m pytest": "the whole suite: this test is part of it (CI runs it)",
    "python -m harness probe cases/layernorm-padding-variance/broken.py --inputs "
    "cases/layernorm-padding-variance/case.py --launcher layer_norm --backend interpreter":
        "the recorded output's command (49 s of diagnosis experiments); the probe commands above run",
    "pre-commit run casebook-lint --all-files": "needs pre-commit, not a dependency; test_lint_cli runs the hook's "
                                                "command",
    "python -m harness bugs --verify --backend interpreter": "downloads every entry's two versions from PyPI and "
                                                             "runs them: many minutes",
    "python -m harness bugs --backend interpreter --record": "the probe on every entry (tens of minutes), and it "
                                                             "rewrites docs/bugs/",
    "python -m harness bugs --backend gpu+interpreter --record": "a GPU, tens of minutes, rewrites docs/bugs/",
    "python -m harness bugs --no-run --backend interpreter": "rewrites docs/bugs/ and the README's paragraph; "
                                                            "test_bugs holds that the committed ones are remade alike",
    "python -m harness bugs --ray 127.0.0.1:6379": "needs a running Ray cluster",
}
INLINE = {  # commands the README names in its prose, with no placeholder
    "python -m harness --help": ("repo", {0}),
    "python -m harness list": ("repo", {0}),
}

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(y_ptr + offs))


def add(x, y, out):
    add_kernel[(triton.cdiv(x.numel(), 128),)](x, y, out, x.numel(), BLOCK=128)
'''

SCRIPT = '''import sys

import torch
import triton
import triton.language as tl

assert sys.argv[1:] == ["--its-args"], sys.argv


@triton.jit
def double(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


x = torch.ones(100, device="cuda")
double[(1,)](x, 100, BLOCK=128)
assert bool((x == 2).all())
'''


def readme_commands() -> list[str]:
    """Every command of the README's ``sh`` blocks (comments dropped) and the ``$ `` lines of its
    other blocks (with their ``\\`` continuations)."""
    text = (ROOT / "README.md").read_text()
    out = []
    for lang, body in re.findall(r"```(\w*)\n(.*?)```", text, re.S):
        if lang == "sh":
            out += [re.sub(r"\s+#.*$", "", line).strip() for line in body.splitlines() if line.strip()]
        elif lang in ("", "text"):
            joined = re.sub(r"\\\n\s*", "", body)
            out += [line[2:].strip() for line in joined.splitlines() if line.startswith("$ ")]
    return out


def test_every_readme_command_is_weighed():
    found = readme_commands()
    assert len(found) >= 15
    weighed = set(CHEAP) | set(GPU_ONLY) | set(SKIPPED)
    assert not set(found) - weighed, f"README commands in no list here: {sorted(set(found) - weighed)}"
    assert not weighed - set(found), f"listed here, no longer in the README: {sorted(weighed - set(found))}"
    table = (ROOT / "README.md").read_text()
    rows = re.findall(r"^\| `python -m harness (\w+)", table[table.index("## Commands"):], re.M)
    assert len(rows) == len(set(rows)), f"a command with two rows in the Commands table: {rows}"


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    """A user's project: my_kernels.py (an add with no mask), src/ with it, my_script.py, and tests/
    (the sanitizer's fixture suite: kernels written for ``device="cuda"``)."""
    d = tmp_path_factory.mktemp("user")
    (d / "my_kernels.py").write_text(KERNEL)
    (d / "src").mkdir()
    (d / "src" / "kernels.py").write_text(KERNEL)
    (d / "my_script.py").write_text(SCRIPT)
    shutil.copytree(ROOT / "tests" / "sanitize_fixtures", d / "tests",
                    ignore=shutil.ignore_patterns("__pycache__", "four"))
    return d


def run_as_written(command: str, cwd: Path) -> subprocess.CompletedProcess:
    words = shlex.split(command)
    if words[0] == "python":
        words[0] = sys.executable
    elif words[0] == "pytest":
        words[:1] = [sys.executable, "-m", "pytest"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    env.pop("TRITON_INTERPRET", None)
    return subprocess.run(words, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _git_status() -> str | None:
    try:
        return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


@pytest.mark.parametrize("command", sorted(CHEAP) + sorted(INLINE))
def test_a_cheap_readme_command_runs_as_written(command, user):
    if "pytest --casebook-sanitize" in command:
        from importlib.metadata import entry_points

        if not any(ep.value == "harness.sanitize.pytest_plugin" for ep in entry_points(group="pytest11")):
            pytest.skip("the plugin's entry point is there once the package is installed (README: Set up)")
    where, codes = {**CHEAP, **INLINE}[command]
    before = _git_status()
    out = run_as_written(command, ROOT if where == "repo" else user)
    assert out.returncode in codes, (command, out.returncode, out.stdout[-3000:], out.stderr[-3000:])
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    assert _git_status() == before, "the command changed the working tree"
    if "--format sarif" in command:
        assert json.loads(out.stdout)["runs"][0]["results"], out.stdout[:2000]
    if "probe examples/rownorm" in command:
        assert "diagnosis, most likely first:" in out.stdout and "out-of-bounds" in out.stdout, out.stdout[-2000:]
    if command.endswith("lint my_kernels.py"):
        assert re.search(r"^my_kernels\.py:\d+:\d+: TL\d+ ", out.stdout, re.M), out.stdout


@pytest.mark.parametrize("command", sorted(GPU_ONLY))
def test_a_gpu_only_readme_command_says_so_in_one_line_without_a_gpu(command):
    import torch

    if torch.cuda.is_available():
        pytest.skip(f"{GPU_ONLY[command]}: with a GPU it runs for real (not cheap)")
    out = run_as_written(command, ROOT)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, (out.returncode, out.stderr)
    assert "gpu" in out.stderr.lower()
