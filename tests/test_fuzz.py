"""The command line's promise, fuzzed: whatever the arguments and however malformed the
case folders, every command ends in its documented exit code with one-line errors and
never a traceback.

Most invocations run in this process through ``cli.main`` (fast: they fail before any
kernel runs); a sample runs as real subprocesses, so the interpreter's own exit path
(stdout flushing, signal handlers) is covered too. The generator is seeded, so a failure
repeats; its seed and the failing argv are in the assertion message.
"""

import contextlib
import io
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from harness import cli
from harness.run import backends

ROOT = Path(__file__).resolve().parents[1]
EXIT_CODES = {0, 1, 2, 130, 143}
SEED = 20261123
COMMANDS = ["list", "case", "record", "bench", "new", "check", "detect", "report"]

# ------------------------------------------------------------------ malformed folders

GOOD_TOML = """title = "a synthetic case"
category = "bounds"
defect = "out-of-bounds-write"
summary = "a test fixture"
launcher = "launch"
[expect]
gpu = "wrong"
interpreter = "wrong"
[run]
trials = 1
timeout = 30
[sizes.interpreter]
n = 4
"""


TOML_DEFECTS = {
    "not-toml": "title = [unclosed\n",
    "not-utf8": b"title = \"\xff\xfe\"\n",
    "run-is-a-number": "run = 5\n" + GOOD_TOML.replace("[run]\ntrials = 1\ntimeout = 30\n", ""),
    "compare-is-a-string": 'compare = "strict"\n' + GOOD_TOML,
    "expect-is-a-string": GOOD_TOML.replace('[expect]\ngpu = "wrong"\ninterpreter = "wrong"\n', 'expect = "wrong"\n'),
    "no-expect": GOOD_TOML.replace('[expect]\ngpu = "wrong"\ninterpreter = "wrong"\n', ""),
    "unknown-behaviour": GOOD_TOML.replace('gpu = "wrong"', 'gpu = "explodes"'),
    "behaviour-not-a-string": GOOD_TOML.replace('gpu = "wrong"', "gpu = 3"),
    "too-many-calls": GOOD_TOML.replace('gpu = "wrong"', 'gpu = ["wrong", "ok"]'),
    "skip-without-reason": GOOD_TOML.replace('gpu = "wrong"', 'gpu = "skip"'),
    "all-ok": GOOD_TOML.replace('"wrong"', '"ok"'),
    "unknown-key-in-expect": GOOD_TOML.replace('interpreter = "wrong"\n', 'interpreter = "wrong"\ngpux = "x"\n'),
    "unknown-key-in-run": GOOD_TOML.replace("timeout = 30", "timeout = 30\nretries = 2"),
    "negative-timeout": GOOD_TOML.replace("timeout = 30", "timeout = -5"),
    "zero-trials": GOOD_TOML.replace("trials = 1", "trials = 0"),
    "trials-for-a-third-backend": GOOD_TOML.replace("trials = 1", "trials = { tpu = 2 }"),
    "trials-is-a-string": GOOD_TOML.replace("trials = 1", 'trials = "many"'),
    "calls-zero": GOOD_TOML.replace("trials = 1", "trials = 1\ncalls = 0"),
    "bad-category": GOOD_TOML.replace('category = "bounds"', 'category = "misc"'),
    "bad-defect": GOOD_TOML.replace('defect = "out-of-bounds-write"', 'defect = "oops"'),
    "no-title": GOOD_TOML.replace('title = "a synthetic case"\n', ""),
    "title-a-number": GOOD_TOML.replace('title = "a synthetic case"', "title = 5"),
    "multi-line-title": GOOD_TOML.replace('title = "a synthetic case"', 'title = """two\nlines"""'),
    "launcher-not-an-identifier": GOOD_TOML.replace('launcher = "launch"', 'launcher = "not a name"'),
    "sizes-a-list": GOOD_TOML.replace("[sizes.interpreter]\nn = 4\n", "sizes = [1, 2]\n"),
    "unknown-sizes-table": GOOD_TOML + "[sizes.tpu]\nn = 4\n",
    "negative-rtol": GOOD_TOML + "[compare]\nrtol = -1\n",
    "rtol-a-string": GOOD_TOML + '[compare]\nrtol = "tight"\n',
    "deterministic-a-number": GOOD_TOML + "[compare]\ndeterministic = 1\n",
    "bad-trigger": 'triggers = ["moonphase"]\n' + GOOD_TOML,
    "seen-in-a-string": 'seen_in = "https://example.org"\n' + GOOD_TOML,
    "calibration-a-string": 'calibration = "yes"\n' + GOOD_TOML,
    "bench-without-sizes": GOOD_TOML + '[bench]\nunit = "GB/s"\n',
    "either-without-why": GOOD_TOML.replace('gpu = "wrong"', 'gpu = "wrong|crash"'),
    "empty-file": "",
}

GOOD_CASE_PY = """import torch
from harness.buffers import guarded, output
def make_inputs(*, device, gen, n):
    return {"x": guarded(torch.ones(n), device), "out": output((n,), torch.float32, device)}
def reference(x):
    return x.double()
"""
GOOD_KERNEL = "def launch(x, out):\n    out.copy_(x)\n    return out\n"

CODE_DEFECTS = {  # folders that parse but whose code fails: each must be one row, not a traceback
    "case-py-raises": {"case.py": "raise RuntimeError('boom\\nsecond line')\n"},
    "case-py-syntax-error": {"case.py": "def make_inputs(:\n"},
    "no-make-inputs": {"case.py": "def reference(x):\n    return x\n"},
    "make-inputs-raises": {"case.py": GOOD_CASE_PY.replace("return {", "raise ValueError('no')\n    return {")},
    "no-launcher": {"broken.py": "def other(x, out):\n    return out\n"},
    "launcher-returns-none": {"fixed.py": "def launch(x, out):\n    return None\n"},
    "launcher-exits-0": {"fixed.py": "import os\ndef launch(x, out):\n    os._exit(0)\n"},
    "launcher-wrong-shape": {"fixed.py": "import torch\ndef launch(x, out):\n    return torch.ones(3, 3)\n"},
}

FILE_DEFECTS = {  # missing or misplaced files
    "no-readme": {"README.md": None},
    "no-fixed": {"fixed.py": None},
    "no-case-toml": {"case.toml": None},
    "toml-is-a-folder": {"case.toml": "DIR"},
}

BAD_FOLDER_NAMES = ["Upper-Case", "under_score", "trailing-", "dots.in.name"]


def write_case(root: Path, slug: str, files: dict) -> Path:
    folder = root / slug
    folder.mkdir(parents=True)
    base = {"case.toml": GOOD_TOML, "case.py": GOOD_CASE_PY, "broken.py": GOOD_KERNEL, "fixed.py": GOOD_KERNEL,
            "README.md": "# A synthetic case\n"}
    for name, content in {**base, **files}.items():
        if content is None:
            continue
        if content == "DIR":
            (folder / name).mkdir()
        elif isinstance(content, bytes):
            (folder / name).write_bytes(content)
        else:
            (folder / name).write_text(content)
    return folder


@pytest.fixture(scope="module")
def malformed_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("cases")
    for name, toml in TOML_DEFECTS.items():
        write_case(root, f"toml-{name}", {"case.toml": toml})
    for name, files in {**CODE_DEFECTS, **FILE_DEFECTS}.items():
        write_case(root, name, files)
    for name in BAD_FOLDER_NAMES:
        write_case(root, name, {})
    (root / "a-file-not-a-folder").write_text("x")
    write_case(root, "healthy", {})
    return root


def test_there_are_at_least_40_malformed_folders(malformed_root):
    assert len([p for p in malformed_root.iterdir() if p.name != "healthy"]) >= 40


# ------------------------------------------------------------------ invocations

WORDS = ["healthy", "toml-not-toml", "toml-run-is-a-number", "case-py-raises", "no-launcher", "nosuchcase",
         "../etc", "/etc", "nrm2-race/../x", "a" * 300, "two\nlines", "ünïcode", "", "-", "--", "UPPER",
         "launcher-exits-0", "toml-not-utf8", "no-readme", "Upper-Case"]
OPTION_VALUES = {
    "--trials": ["0", "-1", "abc", "1", "1e9", ""], "--seed": ["-1", "18446744073709551616", "x", "0", "7"],
    "--backend": ["gpu", "tpu", "interpreter", "", "all"], "--jobs": ["0", "-3", "many", "1"],
    "--format": ["github", "nonsense", ""], "--skip": ["memcheck", "bogus", ",,", ""],
    "--category": ["race", "nope"], "--defect": ["store-race", "??"], "--launcher": ["class", "go", "a b"],
    "--title": ["ok title", "two\nlines", 'quote"d'],
}
FLAGS = ["--all", "--json", "--no-run", "--strict", "--record", "--splice-only", "-v", "--help", "--bogus"]


def invocation(rng: random.Random) -> list[str]:
    argv = [rng.choice(COMMANDS + ["nonsense", ""])]
    for _ in range(rng.randint(0, 4)):
        kind = rng.random()
        if kind < 0.4:
            argv.append(rng.choice(WORDS))
        elif kind < 0.8:
            opt = rng.choice(list(OPTION_VALUES))
            argv += [opt, rng.choice(OPTION_VALUES[opt])]
        else:
            argv.append(rng.choice(FLAGS))
    if argv[0] in ("case", "record", "detect", "report", "bench") and "--help" not in argv:
        # keep the fuzz fast: no backend that runs kernels on every malformed folder
        argv += ["--backend", rng.choice(["gpu", "tpu"])] if rng.random() < 0.9 else []
    return argv


def run_in_process(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    return code, out.getvalue(), err.getvalue()


def promise_broken(argv, code, stderr) -> str | None:
    """What is wrong with one invocation's ending, or None."""
    if code not in EXIT_CODES:
        return f"exit {code}"
    if "Traceback" in stderr:
        return "traceback:\n" + stderr[-1500:]
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    lines = [line for line in stderr.splitlines() if line.strip()]
    strays = [line for line in lines if not line.startswith(("error:", "warning:", "running ", "ran ", "  ",
                                                                 "usage:", "interrupted", "terminated"))]
    if strays:
        return f"stderr lines that are not one-line messages: {strays[:3]}"
    if code == 2 and not errors and "--help" not in argv and "-h" not in argv:
        return "exit 2 without an error line"
    return None


@pytest.fixture
def no_gpu(monkeypatch, malformed_root):
    monkeypatch.setattr(backends, "cuda_available", lambda: False)
    monkeypatch.setenv("CASEBOOK_CASES", str(malformed_root))


def test_fuzzed_invocations_keep_the_promise(no_gpu, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # 'new' writes under CASEBOOK_CASES; report --out defaults elsewhere
    rng = random.Random(SEED)
    seen, broken = 0, []
    for _ in range(520):
        argv = invocation(rng)
        if argv[0] == "report" and "--out" not in argv:
            argv += ["--out", str(tmp_path / "report")]
        code, _, err = run_in_process(argv)
        seen += 1
        if (why := promise_broken(argv, code, err)) is not None:
            broken.append(f"{argv!r}: {why}")
    assert seen >= 500
    assert not broken, f"seed {SEED}: {len(broken)} of {seen}:\n" + "\n".join(broken[:10])


MALFORMED_TOML = [f"toml-{name}" for name in TOML_DEFECTS]


@pytest.mark.parametrize("command", [["list"], ["check", "--no-run"], ["report", "--no-run", "--strict"],
                                     ["case", "--backend", "interpreter", *MALFORMED_TOML],
                                     ["detect", "--backend", "interpreter", *MALFORMED_TOML],
                                     ["record", "--backend", "interpreter", *MALFORMED_TOML]])
def test_each_command_reports_every_malformed_toml(no_gpu, tmp_path, command):
    argv = command + (["--out", str(tmp_path)] if command[0] == "report" else [])
    code, out, err = run_in_process(argv)
    assert promise_broken(argv, code, err) is None, err[-2000:]
    assert code in (1, 2)  # the malformed folders are reported, not ignored
    missing = [slug for slug in MALFORMED_TOML if f"{slug}/case.toml" not in out + err]
    assert not missing, err[-3000:]


def test_one_bad_case_never_stops_the_others(no_gpu):
    """The code-level defects, run for real under the interpreter beside a healthy case."""
    slugs = ["healthy"] + list(CODE_DEFECTS)
    code, out, err = run_in_process(["case", *slugs, "--backend", "interpreter", "--jobs", "2"])
    assert promise_broken(["case"], code, err) is None, err[-2000:]
    assert code == 1
    for slug in slugs:
        assert f"\n{slug}: " in out, f"no table for {slug}"
    assert "healthy" in out and out.count("NOT AS DECLARED") >= len(CODE_DEFECTS)


@pytest.mark.parametrize("argv", [["list", "--json"], ["case", "../etc"], ["case", "nosuchcase"],
                                  ["case", "healthy", "--backend", "gpu"], ["check", "--no-run", "toml-not-utf8"],
                                  ["new", "Bad_Slug"], ["frobnicate"], ["case", "--seed", "-1", "healthy"]])
def test_subprocess_invocations_keep_the_promise(malformed_root, argv):
    env = {**os.environ, "CASEBOOK_CASES": str(malformed_root), "CUDA_VISIBLE_DEVICES": ""}
    r = subprocess.run([sys.executable, "-m", "harness", *argv], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=120)
    assert promise_broken(argv, r.returncode, r.stderr) is None, r.stderr[-2000:]


def test_a_closed_stdout_is_not_a_traceback(malformed_root):
    env = {**os.environ, "CASEBOOK_CASES": str(malformed_root)}
    r = subprocess.run(f"'{sys.executable}' -m harness list | head -1", shell=True, cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert "Traceback" not in r.stderr and "BrokenPipe" not in r.stderr
    full = subprocess.run([sys.executable, "-m", "harness", "list"], cwd=ROOT, env=env, stdout=open("/dev/full", "w"),
                          stderr=subprocess.PIPE, text=True, timeout=120)
    assert full.returncode == 2 and full.stderr.count("\n") == 1 and "error:" in full.stderr
