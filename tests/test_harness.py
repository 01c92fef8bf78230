"""The harness itself: guard bands, comparison, the CPU benchmarker, isolation, and bad input."""

import os
import subprocess
import sys

import pytest
import torch

from harness import cli
from harness.core import casetable, compare, discovery, guards
from harness.core.verdict import judge
from harness.errors import EXIT_OK, EXIT_USAGE
from harness.run import triton_compat
from harness.run.isolate import run_isolated
from harness.run.scheduler import run_many

# ---------------------------------------------------------------- guard bands


def test_output_guard_reports_writes_past_the_end_and_unwritten_elements():
    with guards.collecting() as gs:
        out = guards.output((10,), torch.float32, "cpu", pad=8)
        gs.name({"out": out})
    out[:7] = 1.0  # three elements never written
    storage = out.untyped_storage()
    past = torch.tensor([], dtype=torch.float32).set_(storage, out.storage_offset(), (12,))
    past[10:12] = 5.0  # two elements past the end
    report = gs.check()
    assert report["unwritten"] == {"out": 3}
    assert report["wrote_past_end"] == {"out": 2}


def test_input_guard_poisons_padding_and_rows():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    with guards.collecting() as gs:
        g = guards.guarded(t, "cpu", pad=4, row_pad=2)
    assert torch.equal(g, t)
    assert g.stride() == (6, 1)  # rows padded: a kernel that assumes contiguity is caught
    flat = torch.tensor([], dtype=torch.float32).set_(g.untyped_storage(), 0, (4 + 18 + 4,))
    assert torch.isnan(flat[:4]).all() and torch.isnan(flat[g.storage_offset() + 4]).all()
    assert gs.check() == {"wrote_past_end": {}, "unwritten": {}}


def test_finite_poison_rerun_fills_padding_with_zero():
    with guards.collecting(finite_poison=True):
        g = guards.guarded(torch.ones(3), "cpu", pad=2)
    flat = torch.tensor([], dtype=torch.float32).set_(g.untyped_storage(), 0, (7,))
    assert flat.tolist() == [0, 0, 1, 1, 1, 0, 0]


def test_integer_guards_use_a_sentinel():
    g = guards.guarded(torch.zeros(3, dtype=torch.int32), "cpu", pad=1)
    flat = torch.tensor([], dtype=torch.int32).set_(g.untyped_storage(), 0, (5,))
    assert flat[0] == torch.iinfo(torch.int32).max


def test_a_nested_guard_set_leaves_the_outer_one_intact():
    """The padding re-run collects its own guards; the trial's guards still see later calls."""
    with guards.collecting() as outer:
        out = guards.output((4,), torch.float32, "cpu", pad=2)
        outer.name({"out": out})
        with guards.collecting(finite_poison=True) as inner:
            guards.guarded(torch.ones(2), "cpu", pad=1)
        assert len(inner.guards) == 1 and len(outer.guards) == 1
        out.fill_(1.0)
        out.untyped_storage()  # the trial's output is still watched after the re-run
        torch.tensor([], dtype=torch.float32).set_(out.untyped_storage(), 0, (8,))[7] = 3.0
        assert outer.check()["wrote_past_end"] == {"out": 1}


# ---------------------------------------------------------------- comparison


def test_compare_counts_mismatches_and_nan():
    ref = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    out = torch.tensor([1.0, 2.5, float("nan"), 4.0])
    c = compare.compare(out, ref, rtol=1e-6, atol=0.0)
    assert not c["close"] and c["n_bad"] == 2 and c["nonfinite"] == 1
    assert c["first_bad"] == 1 and c["max_abs"] == float("inf")
    assert compare.compare(ref.float(), ref, 1e-6, 0)["close"]


def test_fingerprint_is_bitwise():
    a = torch.tensor([1.0, 2.0])
    assert compare.fingerprint(a) == compare.fingerprint(a.clone())
    assert compare.fingerprint(a) != compare.fingerprint(torch.nextafter(a, a + 1))


# ---------------------------------------------------------------- autotune under the interpreter


def test_cpu_benchmarker_calls_like_do_bench():
    calls = []
    ms = triton_compat.do_bench_cpu(lambda: calls.append(1), warmup=5, rep=10, quantiles=(0.5, 0.2, 0.8))
    # one call, five to estimate, then at least one warm-up and one timed call
    assert len(calls) >= 8 and len(ms) == 3


# ---------------------------------------------------------------- isolation: crashes, hangs, errors

# The folders come from the shared make_case fixture (tests/conftest.py): its Triton row mean, with
# a broken.py whose launcher is one line of plain Python where a test needs a crash, a hang or an error.


def plain_launcher(body: str) -> str:
    """A kernel file whose launcher (make_case's ``row_mean``) runs ``body``."""
    return ('"""A launcher that runs one line of Python."""\n\nimport ctypes\nimport time\n\n\n'
            f"def row_mean(x, out):\n    {body}\n")


def expecting(interpreter: str) -> dict:
    return {"expect": {"interpreter": interpreter}}


@pytest.fixture
def cases_root(tmp_path, monkeypatch, make_case):
    """make_case's default cases folder, which the harness reads in place of cases/."""
    root = tmp_path / "cases"
    monkeypatch.setenv("CASEBOOK_CASES", str(root))
    assert make_case.meta["launcher"] == "row_mean"
    return root


def test_segfault_is_reported_as_a_crash(cases_root, make_case):
    make_case("segv", files={"broken.py": plain_launcher("ctypes.string_at(0)")}, fields=expecting("crash"))
    spec = discovery.load("segv")
    run = run_isolated(spec, "broken", "interpreter", trials=2, seed=0)
    assert run.status == "crash" and "SIGSEGV" in run.message
    (v,) = judge(spec, run)
    assert v.observed == "crash" and v.as_declared
    fixed = run_isolated(spec, "fixed", "interpreter", trials=2, seed=0)
    assert [v.observed for v in judge(spec, fixed)] == ["ok"]


def test_hang_is_killed_and_reported(cases_root, make_case):
    make_case("spin", files={"broken.py": plain_launcher("time.sleep(3600)")}, fields=expecting("hang"))
    spec = discovery.load("spin")
    run = run_isolated(spec, "broken", "interpreter", trials=1, seed=0, timeout=3)
    assert run.status == "hang" and "timed out" in run.message
    assert judge(spec, run)[0].as_declared


def test_the_hang_clock_runs_from_the_launch_not_through_a_slow_setup(cases_root, make_case):
    """A reference that takes longer than the timeout is slow setting up (a loaded machine),
    not a hanging kernel: the run finishes. The same seconds in the launcher are a hang."""
    slow_reference = make_case.texts["case.py"].replace("def reference(", "def _reference(") + (
        "\n\ndef reference(x):\n    import time\n    time.sleep(4)\n    return _reference(x)\n")
    make_case("slow-setup", files={"case.py": slow_reference}, fields={"run": {"timeout": {"interpreter": 2}}})
    spec = discovery.load("slow-setup")
    run = run_isolated(spec, "fixed", "interpreter", trials=1, seed=0)
    assert run.status == "done", run.message
    make_case("slow-launch", files={"broken.py": plain_launcher("time.sleep(4)")},
              fields={**expecting("hang"), "run": {"timeout": {"interpreter": 2}}})
    run = run_isolated(discovery.load("slow-launch"), "broken", "interpreter", trials=1, seed=0)
    assert run.status == "hang", run.message


def test_exception_in_launch_is_a_crash_and_in_setup_an_error(cases_root, make_case):
    make_case("raises", files={"broken.py": plain_launcher("raise RuntimeError('illegal memory access')")},
              fields=expecting("crash"))
    spec = discovery.load("raises")
    run = run_isolated(spec, "broken", "interpreter", trials=1, seed=0)
    assert run.status == "crash" and "illegal memory access" in run.message
    (cases_root / "raises" / "case.py").write_text("def make_inputs(**k): raise ValueError('bad sizes')\n"
                                                   "def reference(x): return x\n")
    run = run_isolated(spec, "broken", "interpreter", trials=1, seed=0)
    assert run.status == "error" and "bad sizes" in run.message
    assert not judge(spec, run)[0].as_declared  # a broken case never passes as a crash


def test_wrong_declaration_is_caught(cases_root, make_case):
    make_case("liar", files={"broken.py": make_case.texts["fixed.py"]}, fields=expecting("wrong"))  # "broken" is right
    spec = discovery.load("liar")
    run = run_isolated(spec, "broken", "interpreter", trials=2, seed=0)
    (v,) = judge(spec, run)
    assert v.observed == "ok" and not v.as_declared


# ---------------------------------------------------------------- the command line


def test_unknown_case_suggests_close_matches(capsys):
    assert cli.main(["case", "nrm2-atomic"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean" in err and "nrm2-atomics" in err


def test_zero_trials_is_refused(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["case", "nrm2-race", "--trials", "0"])
    assert e.value.code == EXIT_USAGE
    assert "must be from 1 to 1000, got 0" in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without a GPU")
def test_gpu_backend_without_gpu_is_one_line(capsys):
    assert cli.main(["case", "nrm2-race", "--backend", "gpu"]) == EXIT_USAGE
    assert "no CUDA GPU" in capsys.readouterr().err


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without a GPU")
def test_bench_without_gpu_fails_clearly(capsys):
    assert cli.main(["bench", "nrm2-atomics"]) == EXIT_USAGE
    assert "needs a CUDA GPU" in capsys.readouterr().err


def test_missing_file_is_named_and_others_still_run(cases_root, make_case, capsys):
    make_case("good")  # wrong under the interpreter, as declared
    make_case("bad", files={"fixed.py": None})
    code = cli.main(["case", "--all", "--backend", "interpreter"])
    captured = capsys.readouterr()
    assert code == EXIT_USAGE
    assert "cases/bad/fixed.py: missing" in captured.err
    assert "good" in captured.out and "as declared" in captured.out


def test_list_shows_every_case(capsys):
    assert cli.main(["list"]) == EXIT_OK
    out = capsys.readouterr().out
    for slug in discovery.slugs():
        assert slug in out


def test_readme_lists_every_case():
    """README.md's table of cases is current: ``new`` and ``record`` rewrite it, as ``list --update-readme`` does."""
    if not casetable.is_the_casebook():
        pytest.skip("CASEBOOK_CASES names a folder of your own: README.md lists the repository's cases")
    specs, errors = discovery.load_all()
    readme = (discovery.REPO_ROOT / "README.md").read_text()
    assert casetable.readme_table(specs) in readme, (
        "README.md's table of cases is not current: python -m harness record <slug> --splice-only rewrites it "
        "(so do new and list --update-readme)")


def test_list_in_an_ascii_locale(make_case, tmp_path):
    """No UTF-8 anywhere (no coercion, no UTF-8 mode): a title's non-ASCII characters are escaped, not fatal."""
    make_case(fields={"title": "Padding lanes add mean² to the variance"})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIOENCODING", "PYTHONUTF8"))}
    env.update(LC_ALL="POSIX", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0", CASEBOOK_CASES=str(tmp_path / "cases"))
    out = subprocess.run([sys.executable, "-m", "harness", "list", "--wide"], cwd=discovery.REPO_ROOT, env=env,
                         capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr.decode(errors="replace")
    assert b"mean\\xb2 to the variance" in out.stdout


# A Triton kernel that reads a terabyte past its input: under the interpreter that is raw
# host memory, and the worker dies of SIGSEGV.
FAR_LOAD = '''"""A kernel that reads far past the end of x."""

import triton
import triton.language as tl


@triton.jit
def far_load(x_ptr, out_ptr):
    tl.store(out_ptr, tl.load(x_ptr + (1 << 40)))


def row_mean(x, out):
    far_load[(1,)](x, out)
    return out
'''


def test_a_crash_and_a_hang_leave_every_other_run_of_the_batch_intact(cases_root, make_case):
    """One batch, as ``case --all`` runs it: a kernel that segfaults the interpreter, a launcher
    that hangs, and a healthy case. The crash and the hang are their own variants' results;
    every other variant finishes all its trials, bit for bit as it does alone."""
    make_case("crashes", files={"broken.py": FAR_LOAD}, fields=expecting("crash"))
    make_case("hangs", files={"broken.py": plain_launcher("time.sleep(3600)")},
              fields={**expecting("hang"), "run": {"timeout": {"interpreter": 3}}})
    make_case("healthy")
    specs = {s: discovery.load(s) for s in ("crashes", "hangs", "healthy")}
    done = run_many([(spec, "interpreter") for spec in specs.values()], trials=2, seed=0, jobs=2)
    assert done[("crashes", "interpreter")]["broken"].status == "crash"
    assert "SIGSEGV" in done[("crashes", "interpreter")]["broken"].message
    assert done[("hangs", "interpreter")]["broken"].status == "hang"
    for slug, spec in specs.items():
        for variant in spec.variants:
            if (slug, variant) in (("crashes", "broken"), ("hangs", "broken")):
                continue
            run = done[(slug, "interpreter")][variant]
            assert run.status == "done" and len(run.trials) == 2, (slug, variant, run.message)
            alone = run_isolated(spec, variant, "interpreter", trials=2, seed=0)
            assert [t.fingerprint for t in run.trials] == [t.fingerprint for t in alone.trials]


def test_the_probe_api_and_command_line_share_names_and_defaults(monkeypatch):
    """``harness.probe(file, detectors=...)`` is ``probe FILE --detectors ...``, with the same defaults."""
    import inspect

    from harness.probe import runner

    sub = cli.build_parser()._subparsers._group_actions[0].choices["probe"]
    option = {s: a for a in sub._actions for s in a.option_strings}
    assert option["--detectors"] is option["--only"] and option["--backend"].default == "all"
    params = inspect.signature(runner.probe).parameters
    assert "detectors" in params
    for name in ("launcher", "seed", "jobs", "timeout", "sizes", "inputs"):
        assert params[name].default == option[f"--{name}"].default, name
    ran = []
    monkeypatch.setattr(runner, "resolve_backends", lambda choice: {"all": ["gpu", "interpreter"]}[choice])
    monkeypatch.setattr(runner, "_probe_backend", lambda report, args, backend, *rest: ran.append(backend))
    runner.probe(__file__)
    assert ran == ["gpu", "interpreter"]  # no backends given: every one there is, as --backend all


def test_every_gpu_log_names_its_device_and_versions():
    """A committed log named for a GPU says inside which GPU, torch and triton ran it (or which record says so)."""
    import re

    logs = [p for d in ("docs", "cases") for p in (discovery.REPO_ROOT / d).rglob("*.log")
            if re.search(r"h100|h200", p.name, re.I)]
    assert logs
    for p in logs:
        text = p.read_text(errors="replace")
        assert re.search(r"NVIDIA H(100|200)", text) and re.search(r"torch \d", text) and re.search(r"triton \d", text), p


def test_list_with_no_cases_folder_is_one_line_and_exit_2(tmp_path):
    """``CASEBOOK_CASES=/nonexistent list`` printed an empty table with exit 0."""
    from pathlib import Path

    env = {**os.environ, "CASEBOOK_CASES": str(tmp_path / "nonexistent")}
    r = subprocess.run([sys.executable, "-m", "harness", "list"], cwd=Path(__file__).resolve().parents[1],
                       capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert r.stderr.strip() == f"error: list: no cases folder at {tmp_path / 'nonexistent'} (CASEBOOK_CASES)"
