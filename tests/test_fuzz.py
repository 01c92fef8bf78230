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
from harness.core import discovery
from harness.run import backends

ROOT = Path(__file__).resolve().parents[1]
EXIT_CODES = {0, 1, 2, 130, 143}
SEED = 20261123
COMMANDS = ["list", "case", "record", "bench", "new", "check", "detect", "report"]

# ------------------------------------------------------------------ malformed folders
# Every folder comes from the shared make_case fixture (tests/conftest.py): its valid case with one
# thing wrong. A TOML defect is make_case's fields with one changed, or a case.toml of its own.


def fields(**changes) -> dict:
    """make_case's arguments: its case.toml's fields with ``changes`` laid over (None deletes)."""
    return {"fields": changes}


def case_toml(content) -> dict:
    """make_case's arguments: ``content`` (text or bytes) as case.toml."""
    return {"files": {"case.toml": content}}


TOML_DEFECTS = {
    "not-toml": case_toml("title = [unclosed\n"),
    "not-utf8": case_toml(b"title = \"\xff\xfe\"\n"),
    "run-is-a-number": fields(run=5),
    "compare-is-a-string": fields(compare="strict"),
    "expect-is-a-string": fields(expect="wrong"),
    "no-expect": fields(expect=None),
    "unknown-behaviour": fields(expect={"gpu": "explodes"}),
    "behaviour-not-a-string": fields(expect={"gpu": 3}),
    "too-many-calls": fields(expect={"gpu": ["wrong", "ok"]}),
    "skip-without-reason": fields(expect={"gpu": "skip"}),
    "all-ok": fields(expect={"gpu": "ok", "interpreter": "ok"}),
    "unknown-key-in-expect": fields(expect={"gpux": "x"}),
    "unknown-key-in-run": fields(run={"retries": 2}),
    "negative-timeout": fields(run={"timeout": -5}),
    "zero-trials": fields(run={"trials": 0}),
    "trials-for-a-third-backend": fields(run={"trials": {"gpu": None, "interpreter": None, "tpu": 2}}),
    "trials-is-a-string": fields(run={"trials": "many"}),
    "calls-zero": fields(run={"calls": 0}),
    "bad-category": fields(category="misc"),
    "bad-defect": fields(defect="oops"),
    "no-title": fields(title=None),
    "title-a-number": fields(title=5),
    "multi-line-title": fields(title="two\nlines"),
    "launcher-not-an-identifier": fields(launcher="not a name"),
    "sizes-a-list": fields(sizes=[1, 2]),
    "unknown-sizes-table": fields(sizes={"tpu": {"n": 4}}),
    "negative-rtol": fields(compare={"rtol": -1}),
    "rtol-a-string": fields(compare={"rtol": "tight"}),
    "deterministic-a-number": fields(compare={"deterministic": 1}),
    "bad-trigger": fields(triggers=["moonphase"]),
    "seen-in-a-string": fields(seen_in="https://example.org"),
    "calibration-a-string": fields(calibration="yes"),
    "bench-without-sizes": fields(bench={"unit": "GB/s"}),
    "either-without-why": fields(expect={"gpu": "wrong|crash"}),
    "empty-file": case_toml(""),
}

LAUNCHER = "row_mean"  # make_case's launcher, with the signature of its kernels
RAISE_IN_MAKE_INPUTS = ("    return {", "    raise ValueError('no')\n    return {")  # an edit of make_case's case.py

CODE_DEFECTS = {  # folders that parse but whose code fails: each must be one row, not a traceback
    "case-py-raises": {"case.py": "raise RuntimeError('boom\\nsecond line')\n"},
    "case-py-syntax-error": {"case.py": "def make_inputs(:\n"},
    "no-make-inputs": {"case.py": "def reference(x):\n    return x\n"},
    "make-inputs-raises": {"case.py": RAISE_IN_MAKE_INPUTS},
    "no-launcher": {"broken.py": "def other(x, out):\n    return out\n"},
    "launcher-returns-none": {"fixed.py": f"def {LAUNCHER}(x, out):\n    return None\n"},
    "launcher-exits-0": {"fixed.py": f"import os\ndef {LAUNCHER}(x, out):\n    os._exit(0)\n"},
    "launcher-wrong-shape": {"fixed.py": f"import torch\ndef {LAUNCHER}(x, out):\n    return torch.ones(3, 3)\n"},
}

FILE_DEFECTS = {  # missing or misplaced files
    "no-readme": {"README.md": None},
    "no-fixed": {"fixed.py": None},
    "no-case-toml": {"case.toml": None},
    "toml-is-a-folder": {"case.toml": {}},
}

BAD_FOLDER_NAMES = ["Upper-Case", "under_score", "trailing-", "dots.in.name"]


def edited(make_case, files: dict) -> dict:
    """``files`` with each (old, new) pair made into make_case's text with old replaced by new."""
    out = {}
    for name, content in files.items():
        if isinstance(content, tuple):
            old, new = content
            assert make_case.texts[name].count(old) == 1, f"{old!r} is not once in make_case's {name}"
            content = make_case.texts[name].replace(old, new)
        out[name] = content
    return out


@pytest.fixture
def malformed_root(make_case, tmp_path):
    root = tmp_path / "cases"
    assert make_case.meta["launcher"] == LAUNCHER
    for name, args in TOML_DEFECTS.items():
        make_case(f"toml-{name}", root=root, **args)
    for name, files in {**CODE_DEFECTS, **FILE_DEFECTS}.items():
        make_case(name, root=root, files=edited(make_case, files))
    for name in BAD_FOLDER_NAMES:
        make_case(name, root=root)
    (root / "a-file-not-a-folder").write_text("x")  # not a case folder: a stray file where one would be
    make_case("healthy", root=root)
    return root


def test_there_are_at_least_40_malformed_folders(malformed_root):
    assert len([p for p in malformed_root.iterdir() if p.name != "healthy"]) >= 40


def test_each_folder_is_malformed_as_its_name_says(malformed_root):
    """Only the defect named: the TOML and file defects are refused by name, the code defects still load."""
    specs, errors = discovery.load_all(malformed_root)
    assert sorted(s.slug for s in specs) == sorted(["healthy", *CODE_DEFECTS])
    expected = [f"cases/toml-{name}/case.toml: " for name in TOML_DEFECTS]
    expected += [f"cases/{name}/{next(iter(files))}: missing" for name, files in FILE_DEFECTS.items()]
    expected += [f"cases/{name!r}: the slug must be" for name in BAD_FOLDER_NAMES]
    assert len(errors) == len(expected)
    for start in expected:
        assert [e for e in errors if e.startswith(start)], f"no error starts {start!r}: {errors}"
    assert not [e for e in errors if e.startswith("cases/toml-") and "every case needs" in e and "is-a-folder" not in e]


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
    # Keep the fuzz fast: nothing here runs a kernel (the machine has no GPU, and the last
    # --backend wins); the tests below run the code-level defects for real, once.
    if argv[0] in ("case", "record", "detect", "report", "bench", "probe") and "--help" not in argv:
        argv += ["--backend", rng.choice(["gpu", "tpu"])]
    if argv[0] == "check":
        argv.append("--no-run")
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


def test_each_size_alone_at_its_largest_on_a_gpu_only():
    """The top of FUZZ's range (a value that overflows only there) is tried on a GPU, before each size
    alone at its telling values (their compiles may spend the budget first); under the interpreter
    one run there may outlast all the rest."""
    from harness.probe import fuzz

    defaults, ranges = {"batch": 2, "dt_shift": 0}, {"batch": (1, 8), "dt_shift": (0, 120)}
    cpu, gpu = fuzz.plan(defaults, [32], ranges, 0, 8), fuzz.plan(defaults, [32], ranges, 0, 8, largest=True)
    top = {"batch": 2, "dt_shift": 120}
    assert top not in cpu and gpu.count(top) == 1  # batch=8, its top, is in the plan already
    assert [s for s in gpu if s != top] == cpu  # the rest of the plan as it was
    assert gpu.index(top) < gpu.index({"batch": 1, "dt_shift": 0})  # before the edges


def test_on_a_gpu_a_value_goes_to_its_top_with_the_other_sizes_at_their_defaults():
    """A size that shapes no tensor (a query scale) adds no work: its top runs at the defaults (made
    small, head_size=1 is one a GPU's tl.dot refuses), and the top furthest from its default comes first."""
    from harness.probe import fuzz

    defaults = {"heads": 4, "head_size": 64, "block": 16, "qscale": 1, "softcap": 50}
    ranges = {"qscale": (1, 5000)}
    plain = fuzz.plan(defaults, [16], ranges, 0, 8, largest=True)
    valued = fuzz.plan(defaults, [16], ranges, 0, 8, largest=True, values={"qscale", "softcap"})
    assert {**defaults, "qscale": 5000} not in plain  # past the volume cap: only made small
    assert any(s["qscale"] == 5000 and s["head_size"] < 16 for s in plain)
    at = valued.index({**defaults, "qscale": 5000})
    # only the defaults' own tails before it (one size one off its default)
    assert at >= 1 and all(sum(abs(s[k] - v) for k, v in defaults.items()) == 1 for s in valued[:at]), valued[:at + 1]


def test_under_the_interpreter_only_a_value_goes_to_its_top():
    from harness.probe import fuzz

    defaults = {"n": 64, "qscale": 1}
    ranges = {"qscale": (1, 5000), "n": (1, 1 << 20)}
    cpu = fuzz.plan(defaults, [16], ranges, 0, 8, values={"qscale"})
    assert {"n": 64, "qscale": 5000} in cpu and not any(s["n"] == 1 << 20 for s in cpu)
    assert {"n": 64, "qscale": 5000} not in fuzz.plan(defaults, [16], ranges, 0, 8)  # not a value: not there


# -- more turns of sizes while shape fuzzing's own time lasts ---------------------------------------------------

def test_a_later_turns_sizes_are_seeded_new_and_within_the_volume_cap():
    from harness.probe import fuzz

    defaults, ranges = {"rows": 8, "cols": 100}, {"rows": (1, 64), "cols": (1, 3000)}
    plan = fuzz.plan(defaults, [64], ranges, 0, 24)
    one = fuzz.more(defaults, [64], ranges, 0, 24, 1, seen=plan)
    assert one == fuzz.more(defaults, [64], ranges, 0, 24, 1, seen=plan)  # seeded: the same turn, the same sizes
    two = fuzz.more(defaults, [64], ranges, 0, 24, 2, seen=plan + one)
    keys = [tuple(sorted(s.items())) for s in plan + one + two]
    assert len(one) == 24 and len(two) == 24 and len(set(keys)) == len(keys)  # nothing tried twice
    assert defaults not in one + two
    cap = max(4 * fuzz.volume(defaults), fuzz.MIN_VOLUME)
    assert all(fuzz.volume(s) <= cap for s in one + two)
    assert fuzz.more({"n": 8}, [64], {"n": 8}, 0, 24, 1) == []  # a pinned size: nothing to draw


RANGES = {"rows": (1, 64), "cols": (1, 3000)}


def _more_state(ranges, sizes):
    from types import SimpleNamespace

    from harness.probe.budget import Budget, ManualClock
    from harness.probe.context import Context

    clock = ManualClock()
    ctx = Context(target=SimpleNamespace(sizes=dict(sizes), ranges=ranges), backend="interpreter", seed=0,
                  name="shapes", budget=Budget(clock=clock, ends=clock.t + 60))
    st = {"sizes": [dict(sizes, cols=1)], "tried": 0, "seconds": 0.0, "memo": {}, "classes": {}, "blocks": [64],
          "pins": (), "base": dict(sizes), "edges": {}, "done": set(), "reported": set()}
    return ctx, st, clock


def test_shape_fuzzing_draws_more_turns_while_its_own_time_lasts_and_none_after_a_failure(monkeypatch):
    from harness.probe.budget import FUZZ_S
    from harness.probe.detectors import shapes

    ran, bad = [], {}
    ctx, st, clock = _more_state(RANGES, {"rows": 8, "cols": 100})

    def memo(ctx, memo, sizes):
        ran.append(sizes)
        clock.sleep(0.01)
        return ("wrong values", "off") if sizes == bad else None

    monkeypatch.setattr(shapes, "_memo", memo)
    shapes.try_sizes(ctx, st)  # quick sizes, nothing wrong: every turn drawn
    assert st["turns"] == shapes.MORE_TURNS and len(ran) == len(st["sizes"]) == 1 + 4 * 24
    assert len({tuple(sorted(s.items())) for s in ran}) == len(ran)
    ctx, st, clock = _more_state(RANGES, {"rows": 8, "cols": 100})
    ran.clear()
    monkeypatch.setattr(shapes, "_memo", lambda c, m, s: (ran.append(s), clock.sleep(FUZZ_S["interpreter"]))[1])
    shapes.try_sizes(ctx, st)  # the plan took more than half of fuzzing's own time: no turn more
    assert len(ran) == 1 and not st.get("turns")
    ctx, st, clock = _more_state(RANGES, {"rows": 8, "cols": 100})
    monkeypatch.setattr(shapes, "_memo", memo)
    ran.clear()
    bad.update(rows=8, cols=1)
    shapes.try_sizes(ctx, st)  # the plan's size was wrong: the rest of the time is the diagnosis's
    assert ran == [{"rows": 8, "cols": 1}] and not st.get("turns") and st["classes"]
