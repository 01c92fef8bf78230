"""The worker and its isolation, on synthetic cases (make_case) whose launchers are plain Python."""

import pytest

from harness.core.spec import load_spec
from harness.core.verdict import judge
from harness.run.isolate import run_isolated, run_variants

# Call 1 puts a NaN in the output (so the worker re-runs with finite padding to see
# whether the NaN came from the padding); call 2 writes two elements past the end.
NAN_THEN_OVERRUN = """
import torch

CALLS = {}  # per output buffer: the worker's finite-padding re-run gets buffers of its own

def row_mean(x, out):
    n_call = CALLS[out.data_ptr()] = CALLS.get(out.data_ptr(), 0) + 1
    out.copy_(x.mean(dim=1))
    if n_call % 2 == 1:
        out[0] = float("nan")
    else:
        n = out.numel()
        whole = torch.tensor([], dtype=out.dtype).set_(out.untyped_storage(), out.storage_offset(), (n + 2,))
        whole[n:] = 1.0
    return out
"""

EXITS_ON_SECOND_CALL = """
import os

CALLS = [0]

def row_mean(x, out):
    CALLS[0] += 1
    if CALLS[0] == 2:
        os._exit(0)
    return out.copy_(x.mean(dim=1))
"""

SEGFAULTS = "import ctypes\n\ndef row_mean(x, out):\n    ctypes.string_at(0)\n"
RIGHT = "def row_mean(x, out):\n    return out.copy_(x.mean(dim=1))\n"


def test_the_finite_padding_rerun_keeps_the_trials_guards(make_case):
    """Regression: the re-run after a NaN used to drop every guard for the rest of the
    trial, so trial 0's second call, which writes past the end, was judged ok."""
    path = make_case("nan-then-overrun", files={"broken.py": NAN_THEN_OVERRUN},
                     fields={"run": {"calls": 2, "trials": {"interpreter": 2}},
                             "expect": {"gpu": "wrong", "interpreter": "wrong"}})
    spec = load_spec(path)
    run = run_isolated(spec, "broken", "interpreter", trials=2, seed=0)
    assert run.status == "done", run.message + run.output_tail
    assert [p.call for p in run.probes] == [0]
    second_calls = run.trials_of_call(1)
    assert [t.guard["wrote_past_end"] for t in second_calls] == [{"out": 2}, {"out": 2}]
    assert [(v.observed, v.as_declared) for v in judge(spec, run)] == [("wrong", True), ("wrong", True)]


def test_a_worker_that_exits_early_with_status_0_is_a_crash(make_case):
    path = make_case("exits-early", files={"fixed.py": EXITS_ON_SECOND_CALL}, fields={"run": {"calls": 1}})
    spec = load_spec(path)
    run = run_isolated(spec, "fixed", "interpreter", trials=3, seed=0)
    assert run.status == "crash" and "1 of 3" in run.message, run.message
    (v,) = judge(spec, run)
    assert (v.observed, v.as_declared) == ("crash", False)


def test_a_crash_in_one_variant_leaves_the_others_of_the_same_worker_intact(make_case):
    """One worker runs every variant of a case; after a crash a fresh one runs what is left."""
    path = make_case("crash-then-rest", files={"broken.py": SEGFAULTS, "fixed.py": RIGHT, "fast.py": RIGHT})
    spec = load_spec(path)
    runs = run_variants(spec, ["broken", "fixed", "fast"], "interpreter", trials=2, seed=0)
    assert runs["broken"].status == "crash" and "SIGSEGV" in runs["broken"].message
    for variant in ("fixed", "fast"):
        assert runs[variant].status == "done" and len(runs[variant].trials) == 2
        assert [v.observed for v in judge(spec, runs[variant])] == ["ok"]


def test_forked_workers_report_as_started_ones_and_stay_isolated(make_case, monkeypatch):
    """Interpreter workers are forks of one server that imported torch once (harness.run.zygote);
    a segfault in one fork is that fork's crash, and the results match plain processes'."""
    import os

    from harness.run import forkserver

    path = make_case("forked", files={"broken.py": SEGFAULTS, "fixed.py": RIGHT})
    spec = load_spec(path)
    seen = []
    real = forkserver.spawn
    monkeypatch.setattr(forkserver, "spawn", lambda *a: seen.append(1) or real(*a))
    forked = run_variants(spec, ["fixed", "broken"], "interpreter", trials=2, seed=0)
    again = run_isolated(spec, "fixed", "interpreter", trials=2, seed=0)  # the same server: no new import
    assert len(seen) == 2, "the interpreter workers were not forked"  # one for both variants, one more
    monkeypatch.setenv("CASEBOOK_FORKSERVER", "0")
    plain = run_variants(spec, ["fixed", "broken"], "interpreter", trials=2, seed=0)
    assert len(seen) == 2  # turned off: plain processes
    for runs in (forked, plain):
        assert runs["broken"].status == "crash" and "SIGSEGV" in runs["broken"].message
        assert runs["fixed"].status == "done" and len(runs["fixed"].trials) == 2
    assert [t.fingerprint for t in forked["fixed"].trials] == [t.fingerprint for t in plain["fixed"].trials]
    assert [t.fingerprint for t in again.trials] == [t.fingerprint for t in plain["fixed"].trials]
    assert os.environ.get("CASEBOOK_FORKSERVER") == "0"


def test_gpu_workers_are_forked_too_and_fail_in_one_line_without_a_gpu(make_case, monkeypatch):
    """GPU workers come from the fork server as well (its CUDA untouched); where there is no GPU
    the forked worker says so as the case's setup error, not a traceback or a hang."""
    import torch

    from harness.run import forkserver

    if torch.cuda.is_available():
        pytest.skip("a CPU-only check")
    spec = load_spec(make_case("gpu-fork"))
    seen = []
    real = forkserver.spawn
    monkeypatch.setattr(forkserver, "spawn", lambda *a: seen.append(a[0]) or real(*a))
    run = run_isolated(spec, "fixed", "gpu", trials=1, seed=0)
    assert seen == ["harness.run.worker"]
    assert run.status == "error" and "no CUDA GPU" in run.message, (run.status, run.message)


def test_the_gpus_synchronized_after_a_launch_are_those_this_process_used(monkeypatch):
    """``sync_all_gpus`` waits for each GPU with this process's context and creates none: synchronizing
    an unused GPU of a machine of several made a context there, seconds inside a case's hang clock
    (a correct kernel taken for hung at its 3 s timeout on 2 x H200). Fakes: no GPU needed."""
    import torch

    from harness.run.worker import sync_all_gpus

    synced = []
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 3)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda d=None: synced.append(d))
    monkeypatch.setattr(torch._C, "_cuda_hasPrimaryContext", lambda d: d in (0, 2), raising=False)
    sync_all_gpus()
    assert synced == [0, 2]
    synced.clear()
    monkeypatch.delattr(torch._C, "_cuda_hasPrimaryContext")  # a torch without the query: every GPU, as before
    sync_all_gpus()
    assert synced == [0, 1, 2]


def test_fork_servers_are_one_per_environment_that_matters_and_idle_ones_are_retired(monkeypatch):
    """pytest's PYTEST_CURRENT_TEST, new at every test, made a fork server per test (64 alive in one run of
    test_bugs_entries, each holding torch): it is no part of a server's key. Past MAX_SERVERS the least
    recently used idle server is closed; a busy one (a child running) is kept."""
    from harness.run import forkserver

    class Fake:
        def __init__(self, env, cwd):
            self.env, self.alive, self.busy, self.closed = env, True, False, False

        def idle(self):
            return not self.busy

        def close(self):
            self.closed = True

        def spawn(self, module, args, log):
            return self

    monkeypatch.setattr(forkserver, "Server", Fake)
    monkeypatch.setattr(forkserver, "_SERVERS", {})
    a = forkserver.spawn("m", "{}", "log", {"X": "1", "PYTEST_CURRENT_TEST": "t1"}, ".")
    assert forkserver.spawn("m", "{}", "log", {"X": "1", "PYTEST_CURRENT_TEST": "t2"}, ".") is a
    a.busy = True
    b = forkserver.spawn("m", "{}", "log", {"X": "2"}, ".")
    c = forkserver.spawn("m", "{}", "log", {"X": "3"}, ".")
    assert forkserver.spawn("m", "{}", "log", {"X": "2"}, ".") is b  # b used last: c is now the oldest idle
    d = forkserver.spawn("m", "{}", "log", {"X": "4"}, ".")
    assert len(forkserver._SERVERS) == forkserver.MAX_SERVERS == 3
    assert not a.closed and c.closed and not b.closed and not d.closed  # a busy, so c went
    assert forkserver.spawn("m", "{}", "log", {"X": "3"}, ".") is not c  # a closed server is started anew
