"""``sanitize --backend gpu`` (issue 40): a memcheck error ends one test, not the run. On the CPU with
a fake compute-sanitizer (a test that aborts the process, one that leaves a report in the log: every
other test still runs, each report is its test's); the folding of the GPU's reports into the
interpreter's; the OOB loads and store of one kernel named as one mechanism; the plugin's spelling.
On a GPU: tests/test_gpu_sanitize.py."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

FAKE_CS = '''\
#!{python}
"""A stand-in for compute-sanitizer: runs the command after --log-file LOG with FAKE_CS_LOG=LOG."""
import os, subprocess, sys
args = sys.argv[1:]
log = args[args.index("--log-file") + 1]
cmd = args[args.index("--log-file") + 2:]
open(log, "a").close()
rc = subprocess.call(cmd, env={{**os.environ, "FAKE_CS_LOG": log}})
sys.exit(rc if rc >= 0 else 128 - rc)
'''

REPORT = """\
========= Invalid __global__ {op} of size 4 bytes
=========     at {kernel}+0x2b0 in {path}:{line}
=========     by thread (107,0,0) in block (3,0,0)
=========     Address 0x7f3c2e8271ac is out of bounds
=========     and is 95 bytes after the nearest allocation at 0x7f3c2e800000 of size 4000 bytes
=========
"""

SUITE = '''\
import os, sys

def _ran(name):
    where = "gpu" if os.environ.get("FAKE_CS_LOG") else "interpreter"
    with open(os.environ["RAN_FILE"], "a") as f:
        f.write(f"{{where}} {{name}}\\n")

def _report(op, line):
    if os.environ.get("FAKE_CS_LOG"):
        with open(os.environ["FAKE_CS_LOG"], "a") as f:
            f.write({report!r}.format(op=op, kernel="k_" + op, path={path!r}, line=line))
            f.flush()

def test_one():
    _ran("one")

def test_aborts():
    _ran("aborts")
    _report("read", 12)
    if os.environ.get("FAKE_CS_LOG"):  # the process dies inside the test, as a lost context makes it
        sys.stdout.flush()
        os.abort()

def test_two():
    _ran("two")

def test_leaves_a_report():
    _ran("leaves")
    _report("write", 13)  # the process goes on: the plugin sees the report and ends it after the test

def test_three():
    _ran("three")
'''


@pytest.fixture
def fake_gpu(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cs = bin_dir / "compute-sanitizer"
    cs.write_text(FAKE_CS.format(python=sys.executable))
    cs.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("RAN_FILE", str(tmp_path / "ran.txt"))
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    suite = tmp_path / "suite"
    suite.mkdir()
    kernel_file = str(suite / "kern.py")
    (suite / "test_suite.py").write_text(SUITE.format(report=REPORT, path=kernel_file))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_test_that_loses_the_process_ends_itself_not_the_run(fake_gpu, capfd):
    from harness.sanitize.runner import Job, run

    outcome = run(Job("pytest", "pytest", ["suite", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]),
                  backend="gpu")
    err = capfd.readouterr().err
    ran = (fake_gpu / "ran.txt").read_text().split("\n")
    names = ["one", "aborts", "two", "leaves", "three"]
    assert [r.split()[1] for r in ran if r.startswith("gpu ")] == names, (ran, err[-3000:])
    assert [r.split()[1] for r in ran if r.startswith("interpreter ")] == names  # the interpreter's pass: all
    assert "suite/test_suite.py::test_aborts lost the CUDA context" in err and "the 3 tests left run" in err
    assert "suite/test_suite.py::test_leaves_a_report lost the CUDA context (compute-sanitizer reported" in err
    assert "races between programs" in err  # what the GPU cannot see, said
    by_code = {f.code: f for f in outcome.findings}
    assert by_code["P102"].tests == ["suite/test_suite.py::test_aborts"] and by_code["P102"].line.endswith("kern.py:12")
    assert by_code["P101"].tests == ["suite/test_suite.py::test_leaves_a_report"]
    assert by_code["P101"].line.endswith("kern.py:13") and by_code["P101"].backend == "gpu"
    assert outcome.returncode == 1


def test_a_clean_suite_runs_once_and_keeps_its_exit_status(fake_gpu, capfd):
    from harness.sanitize.runner import Job, run

    (fake_gpu / "suite" / "test_suite.py").write_text("def test_ok():\n    pass\n")
    outcome = run(Job("pytest", "pytest", ["suite", "-q", "-p", "no:cacheprovider"]), backend="gpu")
    assert "lost the CUDA context" not in capfd.readouterr().err
    assert outcome.returncode == 0 and outcome.findings == []
    (fake_gpu / "suite" / "test_suite.py").write_text("def test_bad():\n    assert False\n")
    assert run(Job("pytest", "pytest", ["suite", "-q", "-p", "no:cacheprovider"]), backend="gpu").returncode == 1


def test_a_script_runs_under_memcheck_then_under_the_interpreter(fake_gpu, capfd):
    from harness.sanitize.runner import Job, run

    script = fake_gpu / "script.py"
    script.write_text(SUITE.format(report=REPORT, path=str(fake_gpu / "suite" / "kern.py"))
                      + "\n_ran('script')\n_report('write', 13)\nraise SystemExit(3)\n")
    outcome = run(Job("script", str(script)), backend="gpu")
    assert (fake_gpu / "ran.txt").read_text().split() == ["gpu", "script", "interpreter", "script"]
    assert [(f.code, f.backend) for f in outcome.findings] == [("P101", "gpu")]
    assert outcome.returncode == 3  # the script's own status: the command weighs the findings (exit 1 there)
    assert "races between programs" in capfd.readouterr().err


BESIDE = '''\
import os, time

def _where():
    return "gpu" if os.environ.get("FAKE_CS_LOG") else "interpreter"

def test_waits_for_the_other_pass():
    """The GPU pass waits for the interpreter's to reach this test: it sees it only if both run at once."""
    mark = os.path.join(os.environ["MARKS"], _where())
    open(mark, "w").close()
    print(f"{_where().upper()}-PASS begins")
    if _where() == "gpu":
        other = os.path.join(os.environ["MARKS"], "interpreter")
        for _ in range(1200):  # two minutes at most: a pass that never comes fails the test, never hangs it
            if os.path.exists(other):
                break
            time.sleep(0.1)
        assert os.path.exists(other), "the interpreter's pass had not started"
    print(f"{_where().upper()}-PASS ends")
'''


def test_a_suites_interpreter_pass_runs_beside_the_gpus_and_prints_after_it(fake_gpu, capfd, monkeypatch):
    """The GPU mode's two passes of a pytest suite at once (its wall time the longer pass's, issue 40), the
    interpreter's output held and printed after the GPU's, whole: the passes' lines never interleave."""
    from harness.sanitize.runner import Job, run

    monkeypatch.setenv("MARKS", str(fake_gpu))
    (fake_gpu / "suite" / "test_suite.py").write_text(BESIDE)
    outcome = run(Job("pytest", "pytest", ["suite", "-q", "-s", "-p", "no:cacheprovider"]), backend="gpu")
    out, err = capfd.readouterr()
    assert outcome.returncode == 0, out[-3000:] + err[-3000:]
    lines = [line for line in out.splitlines() if "-PASS " in line]
    assert lines == ["GPU-PASS begins", "GPU-PASS ends", "INTERPRETER-PASS begins", "INTERPRETER-PASS ends"], out
    assert "races between programs" in err


SPARE = '''\
import os, time

def _note(line):
    with open(os.environ["RAN_FILE"], "a") as f:
        f.write(line + "\\n")

def _collected():
    with open(os.environ["RAN_FILE"]) as f:
        return {line.split()[1] for line in f if line.startswith("collected ")}

if os.environ.get("FAKE_CS_LOG"):
    _note(f"collected {os.getpid()}")

def test_first():
    if os.environ.get("FAKE_CS_LOG"):  # on the "GPU": wait for the next process to have collected this suite
        for _ in range(1200):  # two minutes at most: a process that never comes fails the test, never hangs it
            if _collected() - {str(os.getpid())}:
                break
            time.sleep(0.1)
        _note("first: the next process " + ("had collected" if _collected() - {str(os.getpid())} else "was not there"))
        os.abort()

def test_second():
    _note(f"second ran in {os.getpid()} " + ("gpu" if os.environ.get("FAKE_CS_LOG") else "interpreter"))
'''


def test_the_process_for_the_tests_left_has_started_and_collected_before_it_is_needed(fake_gpu, capfd):
    """The next GPU process (compute-sanitizer, Python, torch, the suite collected) starts while one runs,
    and waits for its turn: the tests left after a lost context do not wait for its start (issue 40)."""
    from harness.sanitize.runner import Job, run

    (fake_gpu / "suite" / "test_suite.py").write_text(SPARE)
    (fake_gpu / "ran.txt").write_text("")
    outcome = run(Job("pytest", "pytest", ["suite", "-q", "-p", "no:cacheprovider"]), backend="gpu")
    err = capfd.readouterr().err
    ran = (fake_gpu / "ran.txt").read_text().splitlines()
    assert "first: the next process had collected" in ran, (ran, err[-3000:])
    second = [line.split() for line in ran if line.startswith("second ran in")]
    assert sorted(w[-1] for w in second) == ["gpu", "interpreter"], ran
    gpu_pid = next(w[3] for w in second if w[-1] == "gpu")
    assert f"collected {gpu_pid}" in ran  # the spare that collected ahead ran the test left
    assert "suite/test_suite.py::test_first lost the CUDA context" in err and "the 1 tests left run" in err
    assert outcome.returncode == 1


STUCK = '''\
import os, time

open(os.path.join(os.environ["CASEBOOK_FUZZ_PIDS"], f"{os.getpid()}"), "w").close()  # each process, once collecting

def test_stuck():
    time.sleep(600)
'''

INTERRUPTED = '''\
import sys
from harness.sanitize.runner import Job, run
try:
    run(Job("pytest", "pytest", [sys.argv[1], "-q", "-p", "no:cacheprovider"]), backend="gpu")
except KeyboardInterrupt:
    sys.exit(130)
'''


def test_an_interrupted_gpu_run_leaves_no_pass_behind(fake_gpu, tmp_path):
    """Ctrl-C while the GPU's pass runs, its spare waits and the interpreter's pass runs beside them: every
    one of them ends with the command (an interrupted command leaves no process behind)."""
    import signal

    from test_interrupts import left_after

    pids = tmp_path / "pids"
    pids.mkdir()
    (fake_gpu / "suite" / "test_suite.py").write_text(STUCK)
    code, left = left_after([sys.executable, "-c", INTERRUPTED, str(fake_gpu / "suite")], pids,
                            {**os.environ, "PYTHONPATH": str(ROOT)}, stop=signal.SIGINT)
    assert len(list(pids.iterdir())) == 3  # the GPU's pass, its spare, the interpreter's pass
    assert code == 130 and not left, f"left running after the command was interrupted: {left}"


def _passes_of(tmp_path, monkeypatch, args: list, addopts: str = "") -> list:
    """The order in which ``gpu.run`` starts and ends a suite's passes (fakes: no process), given ``args``."""
    from harness.sanitize import gpu
    from harness.sanitize.runner import Job

    order = []

    class Begun:
        def __init__(self, backend):
            self.backend = backend

        def finish(self):
            order.append(("finish", self.backend))
            return 0

        def stop(self):
            order.append(("stop", self.backend))

    def start(job, results, backend, env, prefix):
        order.append(("start", backend))
        return 0

    def begin(job, results, backend, env, prefix, held=False):
        order.append(("begin", backend))
        return Begun(backend)

    monkeypatch.setattr(gpu, "wrapper", lambda log: ["compute-sanitizer"])
    monkeypatch.setenv("PYTEST_ADDOPTS", addopts)
    gpu.run(Job("pytest", "pytest", args), str(tmp_path), start, lambda line: None, begin)
    return [step for step in order if step[1] == "interpreter"]


def test_a_suite_given_basetemp_runs_its_passes_one_after_the_other(tmp_path, monkeypatch):
    """pytest empties ``--basetemp`` as each session starts: two passes at once in one such folder would empty
    each other's tmp_path, so there the interpreter's pass starts after the GPU's (without it, beside it)."""
    assert _passes_of(tmp_path, monkeypatch, ["suite"]) == [("begin", "interpreter"), ("finish", "interpreter")]
    for args, addopts in ((["suite", "--basetemp", str(tmp_path / "t")], ""), ([f"--basetemp={tmp_path}/t"], ""),
                          (["suite"], f"-q --basetemp={tmp_path}/t")):
        assert _passes_of(tmp_path, monkeypatch, args, addopts) == [("start", "interpreter")], (args, addopts)


H200_REPORT = """\
========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 8 bytes
=========     at add_unmasked_kernel+0xc0 in kernels.py:16
=========     by thread (116,0,0) in block (3,0,0)
=========     Access to 0x7fb45a800fa0 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7fb45a800000 of size 4,000 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: launch [0x1dbc] in __triton_launcher.cpython-312-x86_64-linux-gnu.so
"""  # compute-sanitizer 2025.3.1 on an H200 (docs/measurements/sanitize-gpu-h200.log's run)


def test_compute_sanitizer_2025_reports_are_read():
    from harness.sanitize import gpu

    (at, hit), = gpu.parse_at(H200_REPORT)
    assert at == len("========= COMPUTE-SANITIZER\n")
    assert (hit["code"], hit["kernel"], hit["line"], hit["side"], hit["programs"]) == \
        ("P102", "add_unmasked_kernel", "kernels.py:16", "past the end", ["3"])
    assert "1 bytes after an allocation of 4,000 bytes" in hit["message"]


def test_reports_belong_to_the_test_running_when_they_were_written():
    from harness.sanitize import gpu

    located = [(5, {"code": "P102"}), (39, {"code": "P101"}), (40, {"code": "P101"})]
    got = gpu._attribute(located, [("t::a", 10), ("t::b", 10), ("t::c", 40)])
    assert [h["test"] for h in got] == ["", "t::b", "t::c"]
    assert gpu._combined([1, 0]) == 1 and gpu._combined([0, 0]) == 0 and gpu._combined([5]) == 5
    assert gpu._combined([0, 2, 1]) == 2 and gpu._combined([5, 0]) == 0


def test_the_gpus_report_folds_into_the_interpreters_at_the_same_line_and_test():
    """compute-sanitizer names a Triton kernel's file without its folder (``kernels.py:16``, as on
    an H200, docs/measurements/sanitize-gpu-h200.log)."""
    from harness.sanitize import gpu

    interp = [{"code": "P102", "kernel": "add", "line": "t/k.py:16", "test": "t::a", "tensor": "x_ptr"},
              {"code": "P301", "kernel": "sum", "line": "t/k.py:34", "test": "t::b"}]
    gpu_hits = [{"code": "P102", "kernel": "add", "line": "k.py:16", "test": "t::a", "backend": "gpu", "tensor": "0x1"},
                {"code": "P102", "kernel": "add", "line": "k.py:16", "test": "t::a", "backend": "gpu", "tensor": "0x2"},
                {"code": "P101", "kernel": "add", "line": "k.py:18", "test": "t::a", "backend": "gpu"},
                {"code": "P102", "kernel": "add", "line": "k.py:16", "test": "t::other", "backend": "gpu"}]
    out = gpu.fold(gpu_hits, interp)
    assert [(h["code"], h["line"], h.get("backend"), h["test"]) for h in out] == [
        ("P102", "t/k.py:16", "gpu+interpreter", "t::a"), ("P301", "t/k.py:34", None, "t::b"),
        ("P101", "t/k.py:18", "gpu", "t::a"), ("P102", "t/k.py:16", "gpu", "t::other")]
    no_line = [{"code": "P102", "kernel": "add", "line": "", "test": "t::a", "backend": "gpu"}]
    assert gpu.fold(no_line, interp)[0]["backend"] == "gpu+interpreter"


def test_an_unmasked_tails_loads_and_store_name_add_missing_mask_first():
    """One kernel's loads and store past the end are one missing mask: the load's finding names
    add-missing-mask first too (it named the read-only cases first before, issue 40)."""
    from harness.sanitize import findings as F

    def hit(code, kind, line, tensor):
        return {"code": code, "kernel": "add_kernel", "line": f"k.py:{line}", "kind": kind, "tensor": tensor,
                "side": "past the end", "elements": 24, "lanes": 24, "programs": ["3"], "test": "t::add"}

    both = F.collect([hit("P102", "load", 16, "x_ptr"), hit("P102", "load", 17, "y_ptr"),
                      hit("P101", "store", 18, "out_ptr")])
    assert [f.cases[0]["slug"] for f in both] == ["add-missing-mask"] * 3
    alone = F.collect([hit("P102", "load", 16, "x_ptr")])
    assert alone[0].cases[0]["slug"] != "add-missing-mask"  # a load alone is a read past a tensor
    assert "add-missing-mask" not in [c["slug"] for c in alone[0].cases[:1]]


def test_the_plugins_gpu_backend_strips_its_own_options_and_needs_a_gpu(tmp_path):
    from harness.sanitize import gpu

    assert gpu.user_args(["--casebook-sanitize", "report", "--casebook-sanitize-backend", "gpu", "t/", "-q"]) == \
        ["t/", "-q"]
    assert gpu.user_args(["--casebook-sanitize=fail", "--casebook-sanitize-backend=gpu", "--casebook-sanitize-tf32",
                          "--casebook-sanitize", "t/"]) == ["t/"]
    if _cuda():
        pytest.skip("a GPU is here: the plugin runs (see the gpu-marked test)")
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "harness.sanitize.pytest_plugin", "--casebook-sanitize",
                          "--casebook-sanitize-backend", "gpu", str(tmp_path), "-q", "-p", "no:cacheprovider"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 4 and "no CUDA GPU is available here" in out.stderr + out.stdout, out.stderr[-2000:]
    assert "Traceback" not in out.stderr


def _cuda() -> bool:
    from harness.run.backends import cuda_available

    return cuda_available()
