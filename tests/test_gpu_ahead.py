"""The GPU suite's work started ahead (tests/conftest.py): each piece's begin and end are noted, and
the summary lists them, earliest first, so a piece that starts late or runs long shows (issue 40)."""

import importlib.util
from pathlib import Path

import pytest


def _conftest():
    """This folder's conftest.py by its path: a bare ``import conftest`` takes whichever conftest the suite
    imported last under that name (tests/sanitize_fixtures' one, after the sanitize tests ran pytest in-process)."""
    spec = importlib.util.spec_from_file_location("casebook_tests_conftest", Path(__file__).with_name("conftest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conftest = _conftest()


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_each_piece_started_ahead_notes_when_it_began_and_ended_even_when_it_raises():
    clock, times = Clock(), {}

    def batch(n):
        clock.t += n
        return n * 2

    assert conftest._timed(("cases", "gpu"), batch, times, clock)(30) == 60
    assert times[("cases", "gpu")] == [100.0, 130.0]

    def fails():
        clock.t += 2
        raise RuntimeError("the probe's worker died")

    with pytest.raises(RuntimeError):
        conftest._timed("sanitize-four", fails, times, clock)()
    assert times["sanitize-four"] == [130.0, 132.0]


def test_the_summary_lists_each_piece_earliest_first_with_its_seconds():
    times = {("probe", "matmul-k-tail"): [12.0, 40.5], ("cases", "gpu"): [11.0, 33.0], ("layout-gpu",): [12.5, None]}
    assert conftest.ahead_lines(times, t0=1.0) == [
        "cases/gpu: began at 10.0 s, ended at 32.0 s (22.0 s)",
        "probe/matmul-k-tail: began at 11.0 s, ended at 39.5 s (28.5 s)",
        "layout-gpu: began at 11.5 s, ended at not yet",
    ]


def test_only_a_plain_gpu_selection_lets_a_module_start_its_work_when_collected():
    from types import SimpleNamespace as NS

    plain = dict(markexpr="gpu", keyword="", deselect=None, lf=False, stepwise=False, collectonly=False)
    assert conftest.plainly_gpu(NS(**plain), ["tests"]) and conftest.plainly_gpu(NS(markexpr=" gpu "), [])
    for change in ({"markexpr": ""}, {"markexpr": "gpu and not slow"}, {"keyword": "nrm2"},
                   {"deselect": ["tests/test_cases.py::x"]}, {"lf": True}, {"stepwise": True}, {"collectonly": True}):
        assert not conftest.plainly_gpu(NS(**{**plain, **change}), ["tests"]), change
    assert not conftest.plainly_gpu(NS(**plain), ["tests/test_cases.py::test_behaves_as_declared"])


A_MODULE = '''\
import os
import pytest

def _note(line):
    with open(os.environ["AHEAD_LOG"], "a") as f:
        f.write(line + "\\n")

def _work(n):
    return n * 2

def gpu_ahead(items, start):
    _note("a: gpu_ahead " + ",".join(i.name for i in items))
    start("a", _work, 21)

@pytest.mark.gpu
def test_a_gpu(ahead):
    assert ahead("a", _work, 21) == 42

def test_a_cpu():
    pass
'''

B_MODULE = '''\
import os
with open(os.environ["AHEAD_LOG"], "a") as f:
    f.write("b: imported\\n")

def test_b():
    pass
'''


def test_under_a_plain_gpu_selection_a_modules_work_starts_before_the_next_module_is_collected(tmp_path):
    """``-m gpu``: test_a's GPU work starts once test_a is collected, before test_b is imported (the case
    batch no longer waits for the whole suite's collection, issue 40); with ``-k`` (which pytest applies
    once every module is collected) it starts at the end of collection, as before. Once either way."""
    import os
    import subprocess
    import sys

    text = Path(__file__).with_name("conftest.py").read_text()
    (tmp_path / "conftest.py").write_text(text + "\n\ndef cuda_available():  # a GPU, as far as this suite knows\n"
                                                 "    return True\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    gpu: on a GPU\n")
    (tmp_path / "test_a.py").write_text(A_MODULE)
    (tmp_path / "test_b.py").write_text(B_MODULE)
    log = tmp_path / "ahead.log"
    root = str(Path(__file__).resolve().parents[1])  # (the casebook's pytest plugin, installed, imports harness)

    def run(*args):
        log.write_text("")
        out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300, env={**os.environ, "AHEAD_LOG": str(log), "PYTHONPATH": root})
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        assert "a: began at" in out.stdout  # the summary of the work started ahead
        return log.read_text().splitlines()

    assert run("-m", "gpu") == ["a: gpu_ahead test_a_gpu", "b: imported"]
    assert run("-m", "gpu", "-k", "test_a") == ["b: imported", "a: gpu_ahead test_a_gpu"]
    # a module with a class: its GPU tests are known at the end of collection, all of them at once (the class's
    # own collection report holds its tests only: the module's others would miss their work started ahead)
    (tmp_path / "test_a.py").write_text(A_MODULE + "\n\nclass TestA:\n    @pytest.mark.gpu\n"
                                                    "    def test_in_class(self):\n        pass\n")
    assert run("-m", "gpu") == ["b: imported", "a: gpu_ahead test_a_gpu,test_in_class"]


def _config(args, where, markexpr="gpu"):
    from types import SimpleNamespace
    option = SimpleNamespace(markexpr=markexpr, keyword="", deselect=None, lf=False, stepwise=False, collectonly=False)
    return SimpleNamespace(option=option, args=args, invocation_params=SimpleNamespace(dir=where))


def test_the_case_batch_starts_at_configure_only_where_the_run_collects_the_cases(monkeypatch):
    """Under a plain ``-m gpu`` that collects tests/test_cases.py, with an NVIDIA driver loaded, the batch of every
    GPU case starts from pytest_configure (before the collection ahead of that module); a run of other files, a
    narrower selection, or no driver starts nothing."""
    root = Path(__file__).resolve().parents[1]
    started = []
    monkeypatch.setattr(conftest, "_start", lambda key, fn, *a: started.append(key))
    monkeypatch.setattr(conftest, "_nvidia_driver", lambda: True)
    for args, where in (([], root), (["tests"], root), ([str(root / "tests" / "test_cases.py")], "/"), (["."], root / "tests")):
        started.clear()
        conftest.pytest_configure(_config(args, where))
        assert started == [("cases", "gpu")], (args, where)
    ignored = [_config([], root) for _ in range(3)]  # the cases left out of the collection: a batch for nothing
    ignored[0].option.ignore, ignored[1].option.ignore, ignored[2].option.ignore_glob = \
        ["tests/test_cases.py"], ["tests"], ["*/test_cas*.py"]
    for config in (_config(["tests/test_probe_layout.py"], root), _config([], root, markexpr="gpu and not slow"),
                   _config(["tests/test_cases.py::test_every_case_folder_is_well_formed"], root), *ignored):
        started.clear()
        conftest.pytest_configure(config)
        assert started == [], config.args
    monkeypatch.setattr(conftest, "_nvidia_driver", lambda: False)
    conftest.pytest_configure(_config([], root))
    assert started == []


def test_an_interrupted_run_ends_the_work_started_ahead_rather_than_waiting_it_out(monkeypatch):
    """Ctrl-C (pytest's INTERRUPTED): the session's end stops the harness's workers, so a piece started ahead (the
    case batch: minutes of worker processes) ends now; the pool is not left to wait for it. The workers accept
    new processes again afterwards. (A fake WORKERS: the real one holds this suite's own work started ahead.)"""
    import threading
    from types import SimpleNamespace

    from harness.run import isolate

    stopping = threading.Event()
    calls = []
    fake = SimpleNamespace(stopping=stopping, stop=lambda: calls.append("stop") or stopping.set(),
                           reopen=lambda: calls.append("reopen") or stopping.clear())
    monkeypatch.setattr(isolate, "WORKERS", fake)
    saw = []
    conftest._start(("slow-piece",), lambda: saw.append(stopping.wait(120)))  # a worker's wait, ended by the stop
    conftest.pytest_sessionfinish(None, pytest.ExitCode.INTERRUPTED)
    assert saw == [True] and calls == ["stop", "reopen"] and not stopping.is_set()
    conftest._start(("quick-piece",), lambda: saw.append("ran"))
    conftest.pytest_sessionfinish(None, pytest.ExitCode.OK)  # a run that ended as runs do: nothing stopped
    assert saw == [True, "ran"] and calls == ["stop", "reopen"]
