"""The probe's budget (``--budget``): the detectors stop starting runs at its end, the diagnosis
keeps its share, and the report says what the budget cut short."""

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from harness import probe
from harness.probe import runner
from harness.probe.blackboard import Blackboard
from harness.probe.budget import DIAGNOSIS_S, RESERVE_SHARE, SPENT, Budget, ManualClock as FakeClock
from harness.probe.detectors import diagnose

ROOT = Path(__file__).resolve().parents[1]
CASE = ROOT / "cases" / "add-missing-mask"


def fuzzed(report):
    return report.meta["interpreter"]["seen"]["fuzz"]


def _fuzz(monkeypatch, path: Path, budget: Budget, detectors=("shapes",), **load):
    """Shape fuzzing (or ``detectors``) of the file at ``path`` in this process (``worker.run_one``),
    on ``budget``'s clock (a ``time.sleep`` of the file's launcher waits on it). Its findings, events
    and Context."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from harness.probe import worker
    from harness.probe.context import Context
    from harness.probe.execute import Watch
    from harness.probe.target import load as load_target

    target = load_target(str(path), **load)
    if "time" in target.launcher.__globals__:  # the fixture's own wait, on the test's clock
        monkeypatch.setitem(target.launcher.__globals__, "time", SimpleNamespace(sleep=budget.clock.sleep))
    ctx = Context(target, "interpreter", 0, "", options={"budget": budget.seconds}, budget=budget,
                  watch=Watch(budget=budget))
    events, found = [], []
    for name in detectors:
        found += worker.run_one(ctx, name, lambda **e: events.append(e), timeout=120.0)
    return found, events, ctx


def test_a_short_budget_cuts_shape_fuzzing_and_the_report_says_so(monkeypatch):
    clock = FakeClock()
    _, _, whole = _fuzz(monkeypatch, CASE / "fixed.py", Budget(clock=clock), inputs=str(CASE / "case.py"),
                        launcher="add")
    fuzz = whole.board.fuzz
    assert fuzz["tried"] == fuzz["planned"] > 8 and not whole.board.fuzz_left
    assert not runner.ProbeReport("f.py", meta={"interpreter": {"seen": whole.board.to_json()}}).cut_short()
    # spent when the worker starts: shape fuzzing does not run
    spent = Budget.starting(1.6, clock)
    clock.sleep(1.6)
    found, events, _ = _fuzz(monkeypatch, CASE / "fixed.py", spent, inputs=str(CASE / "case.py"), launcher="add")
    assert found == [] and {"event": "skipped", "detector": "shapes", "reason": "the probe's budget is spent"} in events
    # with a slow kernel (0.3 s a call), a few of its sizes: the report says how far it got
    found, events, slow = _fuzz(monkeypatch, ROOT / "tests" / "probe_fixtures" / "budget" / "slow_double.py",
                                Budget.starting(6.0, clock))
    fuzz = slow.board.fuzz
    assert 0 < fuzz["tried"] < fuzz["planned"], fuzz
    report = runner.ProbeReport("f.py", meta={"interpreter": {"seen": slow.board.to_json()}}, budget=6.0)
    [line] = report.cut_short()
    assert line.startswith(f"shape fuzzing on the interpreter tried {fuzz['tried']} of") and "--budget 60" in line


def test_a_budget_too_short_for_the_defaults_never_passes_a_broken_kernel():
    # the defaults come first: within 1.6 s they either show the bug or are cut, and the report says so
    # (which of the two depends on the machine's speed; neither is ok)
    r = probe(str(CASE / "broken.py"), inputs=str(CASE / "case.py"), launcher="add", backends=["interpreter"],
              detectors=["reference", "guards"], budget=1.6)
    assert not r.ok and (r.errors or (r.short_of_time() and not r.checked)), r.text()


def test_the_diagnosis_keeps_its_share_of_a_short_budget_and_its_own_time_of_a_long_one():
    assert Budget(10.0).diagnosis_reserve("gpu") == RESERVE_SHARE * 10.0 < DIAGNOSIS_S["gpu"]
    assert Budget(20.0).diagnosis_reserve("interpreter") == RESERVE_SHARE * 20.0 < DIAGNOSIS_S["interpreter"]
    assert Budget(60.0).diagnosis_reserve("interpreter") == DIAGNOSIS_S["interpreter"]
    assert Budget(0.0).diagnosis_reserve("gpu") == 0.0 and Budget().diagnosis_reserve("gpu") == 0


def test_budget_on_the_command_line():
    def cli(*a):
        return subprocess.run([sys.executable, "-m", "harness", "probe", str(CASE / "fixed.py"), "--inputs",
                               str(CASE / "case.py"), "--launcher", "add", "--backend", "interpreter", "--only",
                               "reference", "-q", *a], cwd=ROOT, capture_output=True, text=True, timeout=300)

    bad = cli("--budget", "-3")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--budget" in bad.stderr
    ok = cli("--budget", "0", "--json")
    assert ok.returncode == 0 and '"budget": 0' in ok.stdout, ok.stderr


def test_the_reserve_for_the_diagnosis_starts_only_once_a_result_was_seen_wrong():
    from harness.probe.context import Context

    clock = FakeClock()
    ctx = Context(target=None, backend="gpu", seed=0, name="shapes", budget=Budget(clock=clock, ends=clock.t + 5))
    ctx.budget.reserve = 10.0  # inside the reserve already
    assert not ctx.late()  # all right so far: the time goes to finding
    ctx.board.wrong_now = True  # shape fuzzing met a wrong result: wrap up, the diagnosis needs the rest
    assert ctx.late()
    ctx.board.wrong_now = None
    ctx.board.failing = {"n": 3}  # an earlier detector's error
    assert ctx.late() and ctx.wrap_up_by() == ctx.budget.ends - ctx.budget.reserve
    ctx.board.failing = None
    ctx.budget.reserve = 0.0
    assert not ctx.late()
    clock.sleep(5.001)  # the budget spent: late whatever was seen
    assert ctx.late()
    ctx.budget.ends = None  # no budget: the detector's own deadline
    ctx.budget.begin(timeout=10.0)
    clock.sleep(5.999)
    assert not ctx.late()
    clock.sleep(0.002)  # past WRAP_UP_SHARE (0.6) of its timeout
    assert ctx.late()


# --- a GPU kernel that never returns, under a budget ------------------------------------------------------


class SilentProc:
    """A worker that wrote its first events and then shows nothing (a GPU kernel that spins, a slow
    step between calls): each wait for it moves the test's clock on; ``isolate.end`` ends it."""

    def __init__(self, clock: FakeClock):
        self.clock, self.ended, self.pid = clock, False, -1

    def wait(self, timeout=None):
        if self.ended:
            return -15
        self.clock.sleep(timeout or 0.0)
        raise subprocess.TimeoutExpired("worker", timeout)

    def poll(self):
        return -15 if self.ended else None


def _silent_worker(tmp_path, monkeypatch, clock, *kinds):
    """A worker that reported events of ``kinds`` (a detector's start, a call of the launcher), then
    shows nothing, waited for on ``clock``; its events file."""
    from harness.run import isolate

    events = tmp_path / "events.jsonl"
    events.write_text("".join(f'{{"event": "{k}"}}\n' for k in kinds))
    monkeypatch.setattr(isolate, "end", lambda proc: setattr(proc, "ended", True))
    return SilentProc(clock), str(events)


def _waited(monkeypatch, tmp_path, kinds, timeout, floor, **kw):
    """isolate._wait for a silent worker that reported ``kinds``, on a fake clock, with HANG_FLOOR_S
    ``floor``; ``until``, ``kill_at`` (from the clock's start) and a stop (given the clock) in ``kw``. The Process and the seconds it took."""
    from harness.run import isolate

    monkeypatch.setattr(isolate, "HANG_FLOOR_S", floor)
    clock = FakeClock()
    proc, events = _silent_worker(tmp_path, monkeypatch, clock, *kinds)
    t0, res = clock.t, isolate.Process()
    for key in ("until", "kill_at"):
        if key in kw:
            kw[key] = t0 + kw[key]
    if "stop" in kw:
        kw["stop"] = kw["stop"](clock)
    isolate._wait(proc, timeout, res, events, now=clock.now, **kw)
    return res, clock.t - t0


POLL = 0.2  # isolate.POLL: the hang clock looks at the worker this often


def test_under_a_budget_a_call_that_does_not_return_is_ended_at_the_budgets_end_not_the_timeout(tmp_path,
                                                                                              monkeypatch):
    from harness.run import isolate

    assert isolate.POLL == POLL
    res, took = _waited(monkeypatch, tmp_path, ("start", "calling"), 60.0, floor=1.0, until=2.0)
    assert res.hung and 2.0 <= took <= 2.0 + POLL, took  # not the 60 s timeout
    assert 2.0 - POLL - 1e-6 <= res.silent <= 2.0


def test_the_hang_clock_keeps_its_floor_after_the_last_sign_of_progress(tmp_path, monkeypatch):
    # the budget already spent: the floor still holds
    res, took = _waited(monkeypatch, tmp_path, ("start", "calling"), 60.0, floor=3.0, until=0.0)
    assert res.hung and 3.0 <= took <= 3.0 + 2 * POLL and 3.0 <= res.silent <= 3.0 + POLL


def test_a_slow_step_between_calls_keeps_the_whole_timeout_under_a_budget(tmp_path, monkeypatch):
    """Inputs past 2**31 elements, a float64 reference: slow, and no kernel of the user's runs."""
    res, took = _waited(monkeypatch, tmp_path, ("start", "calling", "called"), 4.0, floor=0.5, until=0.5)
    assert res.hung and 4.0 <= took <= 4.0 + 2 * POLL, took  # the timeout, not the budget


def test_only_budgeted_gpu_processes_get_the_shorter_hang_clock():
    from harness.probe.budget import MARGIN_S
    from harness.probe.runner import _hang_until

    from harness.probe.request import ProbeRequest

    w = ProbeRequest("f.py", backend="gpu", ends=100.0, detectors=["reference", "shapes"])
    assert _hang_until(w) == 100.0 + MARGIN_S
    assert _hang_until(w.with_(stop=100.7)) == 100.7  # where the worker stops what still runs: the report's margin
    assert _hang_until(w.with_(backend="interpreter")) is None  # its detectors stop themselves (SIGALRM)
    assert _hang_until(w.with_(ends=None)) is None  # --budget 0: the whole timeout
    assert _hang_until(w.with_(detectors=["large"], options={"large": True})) is None  # --large keeps its own time
    # the run past 2**31 the probe decides on itself (an int32 offset in the kernels) keeps to the budget
    assert _hang_until(w.with_(detectors=["large"])) == 100.0 + MARGIN_S


def test_the_gpu_worker_marks_each_call_of_the_launcher(monkeypatch):
    from harness.probe import execute

    seen = []
    watch = execute.Watch(emit=lambda **e: seen.append(e["event"]))
    monkeypatch.setattr(execute, "_compare", lambda *a, **k: None)  # the marks alone are tested here
    target = SimpleNamespace(launcher=lambda x: x * 2, reference=lambda x: x * 2)
    import torch

    execute.call(target, {"x": torch.ones(4)}, backend="interpreter", ref=torch.ones(4) * 2, watch=watch)
    assert seen == ["calling", "called"]
    boom = SimpleNamespace(launcher=lambda x: 1 / 0)
    execute.call(boom, {"x": torch.ones(4)}, backend="interpreter", ref=torch.ones(4), watch=watch)
    assert seen[2:] == ["calling", "called"]  # a launcher that raises ends its call too
    execute.call(target, {"x": torch.ones(4)}, backend="interpreter", ref=torch.ones(4) * 2)
    assert len(seen) == 4  # outside a worker (no Watch): no marks


def test_a_compilation_inside_a_call_is_not_a_hang_under_a_budget(tmp_path, monkeypatch):
    """An autotuned kernel compiles its configs inside the launcher's first call at a new size."""
    from harness.run import isolate

    monkeypatch.setattr(isolate, "STARTUP_GRACE", 3.0)
    res, took = _waited(monkeypatch, tmp_path, ("start", "calling", "compiling"), 1.0, floor=0.5, until=0.5)
    assert res.hung and 3.0 <= took <= 3.0 + 2 * POLL, took  # compiling's grace


def test_the_marks_say_when_the_worker_is_inside_a_call_and_not_compiling():
    from harness.run.isolate import _in_call

    assert _in_call([b"start", b"calling"], (False, False)) == (True, False)
    assert _in_call([b"calling", b"compiling"], (False, False)) == (True, True)
    assert _in_call([b"compiled"], (True, True)) == (True, False)  # the kernel runs now
    assert _in_call([b"calling", b"called"], (False, False)) == (False, False)
    assert _in_call([b"start"], (True, False)) == (True, False)  # other events change nothing


# --- the interpreter's side, once the GPU's side hung ------------------------------------------------------


def _gpu_hung_after(seconds: float):
    """The GPU side's hung event (``threading.Event``'s is_set), set ``seconds`` into the clock's wait."""
    return lambda clock, t0=None: SimpleNamespace(is_set=lambda: clock.t >= 1000.0 + seconds)


def test_a_call_inside_the_interpreter_is_stopped_once_the_gpus_side_hung(tmp_path, monkeypatch):
    """A spin lock spins in the interpreter too (its programs run one after another): once the GPU's
    side has shown that the kernel does not return, the interpreter's call need not wait its timeout."""
    import threading

    from harness.probe.runner import _stop_when

    hung = threading.Event()
    assert _stop_when("gpu", hung) is None and _stop_when("interpreter", None) is None
    res, took = _waited(monkeypatch, tmp_path, ("start", "calling"), 60.0, floor=1.0,
                        stop=lambda clock: _stop_when("interpreter", _gpu_hung_after(0.5)(clock)))
    assert not res.hung and 1.0 <= res.stopped <= 1.0 + POLL and took <= 1.0 + 2 * POLL, (res, took)


def test_the_interpreter_is_not_stopped_between_calls_or_before_the_gpu_hung(tmp_path, monkeypatch):
    from harness.probe.runner import _stop_when

    # a slow step after its call, the GPU's side hung from the start: its own timeout, as before
    res, took = _waited(monkeypatch, tmp_path, ("start", "calling", "called"), 2.0, floor=0.2,
                        stop=lambda clock: _stop_when("interpreter", _gpu_hung_after(0.0)(clock)))
    assert res.hung and not res.stopped and took >= 2.0
    # inside a call, the GPU's side fine
    res, took = _waited(monkeypatch, tmp_path, ("calling",), 2.0, floor=0.2,
                        stop=lambda clock: _stop_when("interpreter", _gpu_hung_after(1e9)(clock)))
    assert res.hung and not res.stopped and took >= 2.0


def test_a_stopped_interpreter_call_is_a_note_and_the_rest_are_not_run():
    from harness.probe.findings import INFO
    from harness.probe.request import ProbeRequest
    from harness.probe.runner import Batch, ProbeEvents, Status
    from harness.run.isolate import Process

    said = []
    batch = Batch(ProbeRequest("k.py"), ["reference", "guards"], "interpreter", 30.0, said.append)
    ev = ProbeEvents(started=["reference"], clock={"reference": [None, None]})
    batch.died(ev, Process(returncode=-15, stopped=12.0), 12.5)
    run = batch.results["reference"]
    (f,) = run.findings
    assert run.status is Status.STOPPED and run.label == "stopped" and run.seconds == 12.5
    assert f.code == "P002" and f.severity == INFO and "did not return on the GPU" in f.message
    guards = batch.results["guards"]
    assert guards.label == "not run" and guards.findings[0].severity == INFO and not batch.todo
    assert said == ["interpreter reference: stopped after 12.5s"]


# --- an autotuned kernel re-tunes at each new size ---------------------------------------------------------


def test_under_a_budget_no_run_starts_that_a_new_tuning_would_carry_past_its_end():
    from harness.probe.context import Context

    clock = FakeClock()
    ctx = Context(target=None, backend="gpu", seed=0, name="shapes", budget=Budget(clock=clock, ends=clock.t + 4))
    ctx.budget.tuned(6.0)  # the first tuning took 6 s
    assert ctx.budget.run_cost() == 6.0 and ctx.late()  # a new size would tune again: 6 s, past the budget's end
    ctx.budget = Budget(clock=clock, ends=clock.t + 4)  # nothing tuned: the time goes to finding
    assert ctx.budget.run_cost() == 0.0 and not ctx.late()
    ctx.budget.tuned(6.0)
    ctx.budget.ends = None  # no budget: each detector keeps to its own time
    assert not ctx.late()


def test_the_longest_tuning_inside_a_call_is_measured_not_the_call(monkeypatch):
    """A glue that imports its upstream package in the launcher's first call (seconds) has tuned nothing."""
    import torch

    from harness.probe import execute
    from harness.run.triton_compat import TuningCounter

    clock = FakeClock()
    counter, budget = TuningCounter(), Budget(clock=clock)
    watch = execute.Watch(counter=counter, budget=budget)
    monkeypatch.setattr(execute, "_compare", lambda *a, **k: None)

    def bench():  # autotune benchmarking its configs: the counter's seconds grow with the clock
        clock.sleep(0.3)
        counter.seconds += 0.3

    tunes = SimpleNamespace(launcher=lambda x: bench() or x)
    execute.call(tunes, {"x": torch.ones(4)}, backend="interpreter", ref=torch.ones(4), watch=watch)
    slow = SimpleNamespace(launcher=lambda x: clock.sleep(0.6) or x)  # an import, a slow launcher: no tuning
    execute.call(slow, {"x": torch.ones(4)}, backend="interpreter", ref=torch.ones(4), watch=watch)
    assert budget.run_cost() == 0.3 and abs(clock.t - 1000.9) < 1e-9


def test_each_detector_has_its_own_seconds_from_its_events():
    from harness.probe.runner import _events, _seconds

    proc = SimpleNamespace(events=[{"event": "start", "detector": "reference", "t": 100.0},
                                   {"event": "end", "detector": "reference", "t": 101.5},
                                   {"event": "start", "detector": "shapes", "t": 101.5},
                                   {"event": "end", "detector": "shapes", "t": 109.0}])
    ev = _events(proc)
    assert _seconds(ev, "reference", 4.5) == 1.5 and _seconds(ev, "shapes", 4.5) == 7.5
    assert _seconds(ev, "compute-sanitizer", 40.0) == 40.0  # a GPU tool: its process is its cost


def test_shape_fuzzing_starts_no_size_an_autotuned_kernel_would_tune_past_the_budget(monkeypatch):
    from harness.probe.context import Context
    from harness.probe.detectors import shapes

    ran = []
    monkeypatch.setattr(shapes, "_memo", lambda ctx, memo, sizes: ran.append(sizes))
    clock = FakeClock()
    ctx = Context(target=None, backend="gpu", seed=0, name="shapes", budget=Budget(clock=clock, ends=clock.t + 4))
    ctx.budget.tuned(6.0)

    def state():  # no more turns of sizes after these two (test_fuzz's tests of shapes._more)
        return {"sizes": [{"n": 1}, {"n": 2}], "tried": 0, "seconds": 0.0, "memo": {}, "classes": {},
                "turns": shapes.MORE_TURNS}

    st = state()
    shapes.try_sizes(ctx, st)
    assert ran == [] and st["cut"] and ctx.board.fuzz["tried"] == 0  # left to shapes-rest, which has no time either
    ctx.budget = Budget(clock=clock, ends=clock.t + 4)  # nothing tuned: its first size runs whatever the time
    st = state()
    shapes.try_sizes(ctx, st)
    assert ran == [{"n": 1}, {"n": 2}]


def test_the_diagnosis_leaves_a_third_of_the_time_to_the_sizes_shape_fuzzing_left(monkeypatch):
    """bugs/bitsandbytes-4bit-odd-length-last-element: its own bug shows only at sizes after the
    first failure (a bug the fixed version shares), which shapes-rest reaches after the diagnosis."""
    from harness.probe import experiments, kernels
    from harness.probe.context import Context

    monkeypatch.setattr(experiments, "registry", lambda: {})
    monkeypatch.setattr(kernels, "known_facts", lambda ctx: ctx.board)

    def deadline(left):
        clock = FakeClock()
        ctx = Context(target=None, backend="gpu", seed=0, name="diagnose", board=Blackboard(fuzz_left=left),
                      budget=Budget(clock=clock, ends=clock.t + 9))
        ctx.board.failing = {"n": 1}
        diagnose.run(ctx)
        return ctx.budget.deadline - clock.t

    assert deadline({"cut": True}) == 6.0  # two thirds of the 9 s left
    assert deadline(None) == DIAGNOSIS_S["gpu"] < 9  # nothing left to fuzz (it ran all its sizes): its own time


def _budget_ctx(backend="interpreter", stop_in=0.3):
    """A Context on a fake clock whose budget's end (and stop) is ``stop_in`` seconds away."""
    from harness.probe.context import Context

    clock = FakeClock()
    budget = Budget(20.0, ends=clock.t + stop_in, stop=clock.t + stop_in, clock=clock)
    return Context(target=SimpleNamespace(kernel=SimpleNamespace(), sizes={"n": 8}), backend=backend, seed=0, name="",
                   options={"budget": 20.0}, budget=budget)


def _forever(ctx):
    """A detector whose run never ends: its kernel's calls take 10 ms each of the clock."""
    while True:
        ctx.budget.clock.sleep(0.01)


def test_a_detector_still_running_at_the_budgets_end_is_stopped_and_keeps_what_it_found(monkeypatch):
    """The budget is a wall-clock promise: a run started just before its end does not carry the
    probe past it (the GPU board's probes overran it by up to 1.7 s before this stop)."""
    from harness.probe import worker
    from harness.probe.detectors import Detector
    from harness.probe.findings import ERROR, Finding

    kept = Finding("P401", "slow", "interpreter", "wrong at n=3", severity=ERROR, sizes={"n": 3})
    slow = Detector("slow", "never ends", _forever, partial=lambda ctx: [kept])
    monkeypatch.setattr(worker, "detectors", lambda: {"slow": slow})
    events = []
    ctx = _budget_ctx()
    t0 = ctx.budget.now()
    found = worker.run_one(ctx, "slow", lambda **e: events.append(e), timeout=60.0)
    assert 0.3 <= ctx.budget.now() - t0 < 0.3 + 0.01 + 1e-9  # stopped at the budget's stop, within a call
    assert found[0] is kept and found[1].code == "P000" and found[1].severity == "info"
    assert "stopped at the end of the probe's budget" in found[1].message
    assert {"event": "cut", "detector": "slow"} in events and events[-1] == {"event": "end", "detector": "slow"}
    assert ctx.board.failing == {"n": 3}  # the diagnosis, had it time, would start there

    # one that starts after the stop does not run at all; one with no partial keeps nothing but the note
    events.clear()
    assert worker.run_one(ctx, "slow", lambda **e: events.append(e), timeout=60.0) == []
    assert {"event": "skipped", "detector": "slow", "reason": "the probe's budget is spent"} in events
    bare = Detector("slow", "never ends", _forever)
    monkeypatch.setattr(worker, "detectors", lambda: {"slow": bare})
    found = worker.run_one(_budget_ctx(), "slow", lambda **e: None, timeout=60.0)
    assert [f.code for f in found] == ["P000"]
    # a partial that fails is the detector's own failure (an error event), not the worker's end
    broken = Detector("slow", "never ends", _forever, partial=lambda ctx: 1 / 0)
    monkeypatch.setattr(worker, "detectors", lambda: {"slow": broken})
    events.clear()
    found = worker.run_one(_budget_ctx(), "slow", lambda **e: events.append(e), timeout=60.0)
    assert [f.code for f in found] == ["P000"] and events[-1] == {"event": "end", "detector": "slow"}
    assert any(e["event"] == "error" and "ZeroDivisionError" in e["message"] for e in events)
    assert ctx.budget.timer.earliest() is None and ctx.budget.clock.due is None  # the timer left off


def test_the_detectors_own_timeout_is_still_a_hang_before_the_budgets_end(monkeypatch):
    from harness.probe import worker
    from harness.probe.detectors import Detector

    monkeypatch.setattr(worker, "detectors", lambda: {"slow": Detector("slow", "never ends", _forever)})
    ctx = _budget_ctx(stop_in=30.0)
    t0 = ctx.budget.now()
    found = worker.run_one(ctx, "slow", lambda **e: None, timeout=0.3)
    assert [(f.code, f.severity) for f in found] == [("P002", "error")] and ctx.budget.now() - t0 < 0.32
    unbudgeted = Detector("slow", "its own sizes and time", _forever, budgeted=False)
    monkeypatch.setattr(worker, "detectors", lambda: {"slow": unbudgeted})
    ctx = _budget_ctx(stop_in=0.05)
    t0 = ctx.budget.now()
    found = worker.run_one(ctx, "slow", lambda **e: None, timeout=0.5)
    assert [f.code for f in found] == ["P002"]  # --large keeps to its own time, not the budget
    assert 0.5 <= ctx.budget.now() - t0 < 0.52


def test_a_limit_inside_a_detector_ends_quietly_and_gives_the_outer_ones_back():
    """``Budget.until_deadline`` (a run a detector chose to make: a scaled-up size) is one more
    deadline on the timer's stack: it ends its block quietly, and the detector's timeout and the
    budget's stop still hold after it, and before it where they come first."""
    from harness.probe.budget import BudgetSpent, DetectorTimeout

    ctx = _budget_ctx(stop_in=1.0)
    budget, clock = ctx.budget, ctx.budget.clock
    t0 = clock.t
    with budget.limit(5.0, DetectorTimeout), budget.timer.limit(budget.stop, BudgetSpent):
        with budget.until_deadline(0.25):
            _forever(ctx)
        assert 0.25 <= clock.t - t0 < 0.26 and budget.timer.earliest() == budget.stop
        try:
            with budget.until_deadline(5.0):  # later than the stop: the stop comes first, and is not quiet
                _forever(ctx)
        except BudgetSpent:
            pass
        assert 1.0 <= clock.t - t0 < 1.01
    assert budget.timer.earliest() is None and clock.due is None and clock.handler is None


def test_shape_fuzzing_stopped_at_the_budgets_end_reports_each_failure_it_met_unshrunk():
    from harness.probe.detectors import shapes
    from harness.probe.findings import ERROR, Finding

    ctx = _budget_ctx()
    grid = Finding("P403", "shapes", "interpreter", "grid past 65,535", severity=ERROR)
    st = {"classes": {("wrote outside", frozenset()): ({"n": 1}, "wrote outside a tensor", 1),
                      ("wrong result", frozenset()): ({"n": 1001}, "1 of 1001 differ", 7)},
          "reported": {("wrote outside", frozenset())}}
    ctx.board.fuzz_now = {"grid": [grid], "st": st}
    found = shapes.partial(ctx)
    assert found[0] is grid and len(found) == 2 and ctx.board.fuzz_now is None
    assert found[1].code == "P401" and found[1].sizes == {"n": 1001} and "not shrunk" in found[1].message
    assert "smallest" not in found[1].message
    assert shapes.partial(ctx) == []  # nothing running: nothing kept


# wrong at the defaults (every element doubled), its output made by torch.empty: the reference detector runs again
# with those buffers at 0 to see whether the kernel reads them before writing (a second run of the defaults)
DOUBLES = """
import torch
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=m, other=0.0), mask=m)


def launch(x):
    out = torch.empty_like(x)
    k[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out


def make_inputs(*, device, gen, n=100):
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    return x.double()
"""


DOTS = """
import torch
import triton
import triton.language as tl


@triton.jit
def k(a_ptr, b_ptr, out_ptr):
    i = tl.arange(0, 16)
    a = tl.load(a_ptr + i[:, None] * 16 + i[None, :])
    b = tl.load(b_ptr + i[:, None] * 16 + i[None, :])
    tl.store(out_ptr + i[:, None] * 16 + i[None, :], 2 * tl.dot(a, b))


def launch(a, b):
    out = torch.empty_like(a)
    k[(1,)](a, b, out)
    return out


def make_inputs(*, device, gen):
    return {"a": torch.randn(16, 16, generator=gen).to(device), "b": torch.randn(16, 16, generator=gen).to(device)}


def reference(a, b):
    return a.double() @ b.double()
"""


def test_the_reference_detector_stopped_after_seeing_a_wrong_result_keeps_it(tmp_path, monkeypatch):
    """A run of the default sizes can take most of a CPU probe's minute under the interpreter: where the budget's end
    stops the reference detector in a run that only names the cause more closely (the launcher's buffers at 0), the
    wrong result it saw is kept, an error (it was lost: no finding at all)."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from harness.probe.budget import BudgetSpent
    from harness.probe.context import Context
    from harness.probe.detectors import reference
    from harness.probe.target import load
    from harness.run.triton_compat import patched

    (tmp_path / "k.py").write_text(DOUBLES)
    with patched(interpreter=True):
        ctx = Context(load(str(tmp_path / "k.py"), None, "launch", "interpreter", None), "interpreter", 0,
                      "reference")
        assert [f.code for f in reference.run(ctx)] == ["P201"] and ctx.board.reference_now is None
        plain, calls = ctx.call, []

        def second_run_cut(*a, **k):
            calls.append(1)
            if len(calls) > 1:
                raise BudgetSpent
            return plain(*a, **k)

        ctx.call = second_run_cut
        try:
            reference.run(ctx)
        except BudgetSpent:
            pass
        else:
            raise AssertionError("the budget's end must reach the worker")
        kept = reference.DETECTOR.partial(ctx)
        assert [(f.code, f.severity) for f in kept] == [("P201", "error")], kept
        assert reference.DETECTOR.partial(ctx) == []  # taken once
    # an fp32 tl.dot the interpreter rounded like TF32: stopped in the run without that rounding, the wrong result
    # may be TF32's (a warning, the author's default), and nothing is kept
    (tmp_path / "d.py").write_text(DOTS)
    with patched(interpreter=True):
        ctx = Context(load(str(tmp_path / "d.py"), None, "launch", "interpreter", None), "interpreter", 0,
                      "reference")
        plain, calls = ctx.call, []
        ctx.call = second_run_cut
        try:
            reference.run(ctx)
        except BudgetSpent:
            pass
        assert len(calls) == 2 and reference.DETECTOR.partial(ctx) == []


def test_the_diagnosis_keeps_each_experiments_evidence_as_it_goes(monkeypatch):
    from harness.probe import experiments, kernels
    from harness.probe.budget import BudgetSpent
    from harness.probe.detectors import diagnose

    def budget_ends(ctx, failing):
        raise BudgetSpent

    exps = {"first": SimpleNamespace(run=lambda ctx, failing: {"tail": "wrong at n=7 only"}),
            "second": SimpleNamespace(run=budget_ends)}
    monkeypatch.setattr(experiments, "registry", lambda: exps)
    monkeypatch.setattr(kernels, "known_facts", lambda ctx: setattr(ctx.board, "atomics", True))
    ctx = _budget_ctx(backend="gpu", stop_in=30.0)
    ctx.board.failing = {"n": 7}
    try:
        diagnose.run(ctx)
    except BudgetSpent:
        pass
    else:
        raise AssertionError("the budget's end must reach the worker")
    assert ctx.board.evidence == {"tail": "wrong at n=7 only"} and ctx.board.experiments[0].startswith("first")
    assert diagnose.DETECTOR.partial(ctx) == [] and ctx.board.evidence["atomics"] == "the kernels use atomics"


def test_a_detector_cut_at_the_budgets_end_has_its_status_and_is_not_an_answer():
    from harness.probe import runner

    ev = runner._events(SimpleNamespace(events=[{"event": "start", "detector": "shapes", "t": 1.0},
                                                {"event": "cut", "detector": "shapes"},
                                                {"event": "end", "detector": "shapes", "t": 3.5}]))
    batch = runner.Batch(runner.ProbeRequest("k.py"), ["shapes"], "interpreter", 30.0, None)
    batch.collect(ev, SimpleNamespace(output_tail=""), 0.0)
    run = batch.results["shapes"]
    assert run.status is runner.Status.CUT and run.label == runner.CUT and run.seconds == 2.5
    report = runner.ProbeReport("k.py")
    report.ran = [("interpreter", "shapes", run.seconds, run.label)]
    assert not report.checked and not report.ok  # every detector cut: nothing checked, not exit 0


def test_the_defaults_runs_are_stopped_at_the_budgets_end_too_and_the_rest_stop_there(monkeypatch):
    """The defaults' runs (reference, guards) keep to the budget as every other detector: a first call
    that takes 30 s (a GPU compilation of a large tile: the H200's first-run board had one probe of a
    20 s budget take 51.6 s in its reference detector) is stopped at the budget's stop, and the report
    says so in a note. Shape fuzzing, a size at a time for a kernel that takes 0.3 s a call, stops
    starting sizes at the budget's end, with its sizes so far reported."""
    budget_dir = ROOT / "tests" / "probe_fixtures" / "budget"
    clock = FakeClock()
    budget = Budget.starting(20.0, clock)
    found, events, ctx = _fuzz(monkeypatch, budget_dir / "slow_first_call.py", budget,
                               detectors=("reference", "shapes"))
    assert {"event": "cut", "detector": "reference"} in events
    assert budget.stop <= clock.t <= budget.stop + 0.1 + 1e-9, clock.t - budget.stop  # within one of its steps
    (note,) = found
    assert note.code == "P000" and note.severity == "info" and note.detector == "reference"
    # (nothing seen wrong before its first call ended: nothing kept; the detector keeps a wrong result it saw)
    assert "stopped at the end of the probe's budget" in note.message and "so far are kept" in note.message
    # shape fuzzing started after the budget's end: not run, said so
    assert {"event": "skipped", "detector": "shapes", "reason": "the probe's budget is spent"} in events
    report = runner.ProbeReport("f.py", ran=[("interpreter", "reference", 19.2, runner.CUT),
                                             ("interpreter", "shapes", 0.0, "skipped: the probe's budget is spent")])
    assert not report.checked and not report.ok  # no answer: not exit 0
    assert report.short_of_time()  # the command's line says a larger --budget gives it the time
    assert not runner.ProbeReport("f.py", ran=[("interpreter", "reference", 1.0, "done")]).short_of_time()
    # with time left, shape fuzzing starts, and starts no size after the budget's end (``ends``): the
    # clock stays within the budget (a run still going at its stop is stopped: the test above)
    slow = budget_dir / "slow_double.py"
    clock = FakeClock()
    budget = Budget.starting(5.0, clock)
    found, events, ctx = _fuzz(monkeypatch, slow, budget, detectors=("reference", "shapes"))
    fuzz = ctx.board.fuzz
    assert 0 < fuzz["tried"] < fuzz["planned"] and [e["detector"] for e in events if e["event"] == "end"] == \
        ["reference", "shapes"]
    assert clock.t <= budget.stop, clock.t - budget.stop
    report = runner.ProbeReport("f.py", meta={"interpreter": {"seen": ctx.board.to_json()}}, budget=5.0)
    assert report.cut_short()


def test_no_detector_starts_past_the_budgets_end_even_before_its_stop(monkeypatch):
    """Between ``ends`` and ``stop`` (0.7 s) a detector would only start runs to be cut: it is skipped."""
    from harness.probe import worker
    from harness.probe.detectors import Detector

    ran = []
    monkeypatch.setattr(worker, "detectors", lambda: {"quick": Detector("quick", "one call", lambda ctx: ran.append(1)
                                                                        or [])})
    ctx = _budget_ctx(stop_in=1.0)
    ctx.budget.ends = ctx.budget.now() + 0.3
    ctx.budget.clock.sleep(0.5)
    events = []
    assert worker.run_one(ctx, "quick", lambda **e: events.append(e), timeout=60.0) == [] and not ran
    assert {"event": "skipped", "detector": "quick", "reason": SPENT} in events
    ctx.budget.ends = ctx.budget.stop = None  # no budget: it runs
    assert worker.run_one(ctx, "quick", lambda **e: None, timeout=60.0) == [] and ran == [1]


def test_loading_the_file_keeps_to_the_budget_and_its_end_is_not_bad_input(monkeypatch):
    """make_inputs taking 30 s at the file's own sizes: the worker stops loading at the budget's stop
    (not at the 120 s --timeout) and says the budget ended; the parent reports each detector not run
    for lack of time, a note, not a bad file (exit 2)."""
    import time

    from harness.probe import worker
    from harness.probe.request import ProbeRequest
    from harness.run.isolate import Process

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    clock = FakeClock()
    budget = Budget.starting(20.0, clock)
    monkeypatch.setattr(time, "sleep", clock.sleep)  # the file's make_inputs waits on the test's clock
    events = []
    req = ProbeRequest(str(ROOT / "tests" / "probe_fixtures" / "budget" / "slow_inputs.py"), backend="interpreter",
                       ends=budget.ends, stop=budget.stop)
    assert worker._load(req, lambda **e: events.append(e), budget) is None
    assert events == [{"event": "error", "phase": "budget", "message": "making the inputs at the default sizes"}]
    assert budget.stop <= clock.t <= budget.stop + 0.1 + 1e-9 and budget.timer.earliest() is None
    monkeypatch.undo()

    # the parent: every detector of that process not run, with why; no ProbeInputError
    monkeypatch.setattr(runner, "_run_worker", lambda *a, **k: Process(returncode=2, events=[dict(events[0])]))
    import time as real_time
    req = runner.ProbeRequest("k.py", options={"budget": 20.0}, ends=real_time.monotonic() + 3600,
                              stop=real_time.monotonic() + 3600)
    results, _ = runner.Batch(req, ["reference", "shapes"], "interpreter", 30.0, lambda m: None).run()
    for name in ("reference", "shapes"):
        (f,) = results[name].findings
        assert results[name].status is runner.Status.NOT_RUN and f.code == "P000" and f.severity == "info"
        assert "while its process was making the inputs at the default sizes" in f.message, f.message


def test_no_worker_process_starts_past_the_budgets_end(monkeypatch):
    """A batch that waited for a --jobs slot, or whose process ended early, does not start one past
    the budget's end (its start and the file's loading would carry the probe past it): its detectors
    are notes, and one that keeps its own time (--large) still runs."""
    import time

    from harness.run.isolate import Process

    started = []

    def fake_worker(worker, *a, **k):
        started.append(list(worker.detectors))
        evs = [e for d in worker.detectors for e in ({"event": "start", "detector": d}, {"event": "end", "detector": d})]
        return Process(returncode=0, events=evs)

    monkeypatch.setattr(runner, "_run_worker", fake_worker)
    past = time.monotonic() - 1.0  # already gone, whatever the machine's speed
    req = runner.ProbeRequest("k.py", options={"budget": 20.0, "large": True}, ends=past, stop=past + 0.7)
    results, _ = runner.Batch(req, ["reference", "guards", "large"], "gpu", 30.0, lambda m: None).run()
    assert started == [["large"]]  # (--large keeps to its own time)
    for name in ("reference", "guards"):
        (f,) = results[name].findings
        assert results[name].status is runner.Status.NOT_RUN and f.severity == "info"
        assert "was spent before its process started" in f.message
    assert results["large"].status is runner.Status.DONE


def test_a_worker_alive_at_the_budgets_end_is_ended_there_and_that_is_a_note_not_a_hang(tmp_path, monkeypatch):
    """The worker's own alarm cannot stop code that does not return to Python (a compilation, a CUDA
    call): the parent ends it at the budget's end (``Budget.kill_at``) whatever it does, where the hang
    clock would have granted the compilation STARTUP_GRACE (60 s) or a call HANG_FLOOR_S (10 s) past
    the budget. What it was in is cut (a note), the rest not run for lack of time."""
    from harness.probe.findings import INFO
    from harness.run import isolate

    # compiling inside a call, the budget's end 2 s away: ended at 2 s, not at the grace
    monkeypatch.setattr(isolate, "STARTUP_GRACE", 60.0)
    res, took = _waited(monkeypatch, tmp_path, ("start", "calling", "compiling"), 60.0, floor=10.0, until=1.0,
                        kill_at=2.0)
    assert not res.hung and res.cut == "compiling a kernel" and 2.0 <= took <= 2.0 + 1e-6, (res, took)
    # a call begun 0.5 s before it: ended at the budget's end, not 10 s after the call began, and not a hang
    res, took = _waited(monkeypatch, tmp_path, ("start", "calling"), 60.0, floor=10.0, until=1.5, kill_at=2.0)
    assert not res.hung and res.cut.startswith("inside a call of the launcher") and took <= 2.0 + 1e-6
    # loading (no call yet): the same
    res, took = _waited(monkeypatch, tmp_path, ("start",), 60.0, floor=10.0, kill_at=2.0)
    assert res.cut == "outside a call of the launcher" and took <= 2.0 + 1e-6
    # a call longer than the hang floor at the budget's end is still the hang the clock says (P002)
    res, took = _waited(monkeypatch, tmp_path, ("start", "calling"), 60.0, floor=1.0, until=1.5, kill_at=2.0)
    assert res.hung and not res.cut

    batch = runner.Batch(runner.ProbeRequest("k.py", options={"budget": 20.0}), ["reference", "guards", "shapes"],
                         "gpu", 30.0, lambda m: None)
    ev = runner.ProbeEvents(started=["reference"], clock={"reference": [None, None]})
    batch.died(ev, isolate.Process(returncode=-15, cut="compiling a kernel"), 20.0)
    run = batch.results["reference"]
    (f,) = run.findings
    assert run.status is runner.Status.CUT and f.code == "P000" and f.severity == INFO
    assert "compiling a kernel" in f.message and "stopped at the end of the probe's budget" in f.message
    for name in ("guards", "shapes"):
        assert batch.results[name].status is runner.Status.NOT_RUN and "was spent" in \
            batch.results[name].findings[0].message
    assert not batch.todo
    # ended before its first detector began (its import, make_inputs, a fresh process's own start): the
    # detectors are not run, for the budget, and the file is not called bad
    # (its returncode is left None, as isolate._wait leaves it for a process it ended)
    monkeypatch.setattr(runner, "_run_worker", lambda *a, **k: isolate.Process(cut="outside a call of the launcher"))
    import time

    req = runner.ProbeRequest("k.py", options={"budget": 20.0}, ends=time.monotonic() + 3600,
                              stop=time.monotonic() + 3600)
    results, _ = runner.Batch(req, ["reference", "shapes"], "interpreter", 30.0, lambda m: None).run()
    for name in ("reference", "shapes"):
        assert results[name].status is runner.Status.NOT_RUN and "while its process was starting or loading the " \
            "file" in results[name].findings[0].message


def test_the_parent_ends_workers_at_the_budgets_end_on_both_backends_where_they_keep_to_it():
    from harness.probe.budget import FINISH_S, GRACE_S, STOP_BEFORE_S
    from harness.probe.request import ProbeRequest

    clock = FakeClock()
    b = Budget.starting(20.0, clock)
    # the window ends FINISH_S before the budget's end: the report after it ends by the budget's end
    assert b.kill_at() == clock.t + 20.0 - FINISH_S and b.kill_at() == b.stop + STOP_BEFORE_S and 0 < GRACE_S <= 2.0
    assert 0.8 < FINISH_S < GRACE_S  # more than the report's worst measured time after the window, less than the grace
    w = ProbeRequest("f.py", backend="gpu", ends=b.ends, stop=b.stop, detectors=["reference", "shapes"])
    assert runner._kill_at(w) == b.kill_at() == runner._kill_at(w.with_(backend="interpreter"))
    assert runner._kill_at(w.with_(ends=None, stop=None)) is None  # --budget 0
    assert runner._kill_at(w.with_(detectors=["large"], options={"large": True})) is None  # --large: its own time
    assert runner._kill_at(w.with_(detectors=["large"])) == b.kill_at()  # decided on by the probe: the budget's


def test_a_skipped_detector_says_why_and_costs_nothing():
    from harness.probe import runner

    ev = runner._events(SimpleNamespace(events=[{"event": "start", "detector": "order", "t": 1.0},
                                                {"event": "skipped", "detector": "order", "reason": "no atomics"},
                                                {"event": "end", "detector": "order", "t": 3.5},
                                                {"event": "start", "detector": "race", "t": 3.5},
                                                {"event": "error", "phase": "run", "detector": "race",
                                                 "message": "boom"},
                                                {"event": "end", "detector": "race", "t": 4.0}]))
    batch = runner.Batch(runner.ProbeRequest("k.py"), ["order", "race"], "interpreter", 30.0, None)
    batch.collect(ev, SimpleNamespace(output_tail=""), 0.0)
    order, race = batch.results["order"], batch.results["race"]
    assert order.label == "skipped: no atomics" and order.seconds == 0.0 and order.why == "no atomics"
    assert race.label == "error" and race.seconds == 0.5 and [f.severity for f in race.findings] == ["warning"]


def test_the_timer_raises_the_earliest_deadlines_exception_and_nothing_once_empty():
    import pytest

    from harness.probe.budget import BudgetSpent, DetectorTimeout, ManualClock, Timer

    clock = ManualClock()
    timer = Timer(clock)
    with timer.limit(clock.t + 2, DetectorTimeout):
        with pytest.raises(BudgetSpent), timer.limit(clock.t + 1, BudgetSpent):
            clock.sleep(1.5)  # the earlier one
        assert clock.due == clock.t + 0.5  # the outer one armed again, for what is left of it
        with pytest.raises(BudgetSpent), timer.limit(clock.t + 0.5, BudgetSpent):
            clock.sleep(1)  # a tie (the budget's stop at the detector's timeout): the one pushed last, the stop
    timer._fire()  # an alarm already on its way as the last limit ended: nothing to stop
    assert clock.handler is None and clock.due is None


def test_the_commands_budget_counts_its_own_start():
    """`harness probe` starts its budget when its process started (Python's start and the harness's
    imports, 0.3 to 0.9 s on the loaded 2-core CPU, were outside the budget), read from /proc."""
    from harness.probe.budget import process_started, started_at

    # a process named with a space and a parenthesis, started 1000 ticks (10 s at 100 a second) after the
    # boot, 15 s after the boot now: started 5 s ago
    stat = b"4242 (my (probe) x) S 1 4242 4242 0 -1 4194304 100 0 0 0 5 1 0 0 20 0 1 0 1000 12345 678 rest"
    assert started_at(stat, 100, 15.0, 500.0) == 495.0
    assert started_at(stat, 100, 9.0, 500.0) is None  # a start after now: no such thing
    clock = FakeClock()
    b = Budget.starting(20.0, clock, since=clock.t - 0.8)
    from harness.probe.budget import FINISH_S, MARGIN_S
    assert b.ends == clock.t - 0.8 + 20.0 - FINISH_S - MARGIN_S and b.kill_at() == clock.t - 0.8 + 20.0 - FINISH_S
    assert Budget.starting(20.0, clock, since=clock.t + 5).kill_at() == clock.t + 20.0 - FINISH_S  # never after now
    import time

    started = process_started()
    assert started is None or started <= time.monotonic()


def test_only_the_command_as_its_own_process_counts_its_start(monkeypatch):
    """Inside another program (this test run, calling the command in process) the process's start is
    not the command's: its budget starts at the probe, or it would be spent before it began."""
    import sys

    from harness.commands import probe as command
    from harness.probe import budget

    monkeypatch.setattr(budget, "process_started", lambda: 123.0)
    assert command._own_start() is None  # pytest's process
    monkeypatch.setitem(sys.modules, "__main__", SimpleNamespace(__spec__=SimpleNamespace(name="harness.__main__")))
    assert command._own_start() == 123.0  # python -m harness probe ...
    monkeypatch.setitem(sys.modules, "__main__", SimpleNamespace(__spec__=None))
    monkeypatch.setattr(sys, "argv", ["/venv/bin/triton-casebook", "probe", "k.py"])
    assert command._own_start() == 123.0  # the installed script


def test_a_call_killed_at_the_budgets_end_is_a_warning_a_whole_timeout_an_error():
    """A call ended by the budget's end before the detector's own timeout (a kernel that may be slow on a
    busy GPU) is not shown to hang: a warning. Silent for the whole timeout, it is a hang: an error."""
    import types

    from harness.probe import runner

    ev = types.SimpleNamespace(trying={"n": 8})

    def proc(silent):
        return types.SimpleNamespace(cut="", stopped=0.0, hung=True, silent=silent, returncode=-9)

    cut = runner._ended("reference", "gpu", proc(11.0), ev, timeout=60.0, budget=20.0)
    assert (cut.code, cut.severity) == ("P002", "warning") and "budget" in cut.message, cut
    hang = runner._ended("reference", "gpu", proc(60.0), ev, timeout=60.0, budget=20.0)
    assert (hang.code, hang.severity) == ("P002", "error"), hang


def test_a_detector_that_varies_the_inputs_takes_a_share_of_what_is_left():
    """Layout, special values and scalars wrap up by a third of what the budget has left when they begin,
    so shape fuzzing and the diagnosis after them in their process keep time (on a fake clock)."""
    from harness.probe.budget import VARY_SHARE, Budget, ManualClock

    assert 0 < VARY_SHARE < 1
    clock = ManualClock(100.0)
    b = Budget.starting(30.0, clock=clock)
    clock.t = 106.0
    b.begin(timeout=60.0)
    b.begin_share()
    assert abs(b.deadline - (106.0 + VARY_SHARE * (b.ends - 106.0))) < 1e-9
    assert not b.late()
    clock.t = b.deadline + 0.01
    assert b.late()
    free = Budget.starting(0, clock=clock)  # no budget: no share
    free.begin(timeout=60.0)
    before = free.deadline
    free.begin_share()
    assert free.deadline == before


def test_the_detectors_before_the_large_run_leave_it_its_time():
    """Where the large detector will make its run past 2**31 elements (on the GPU, from the evidence), the detectors
    before it in its process see the budget end ``LARGE_HOLD_S`` earlier, and the large detector then gets it back (on
    a fake clock): ends and stop move together, and nothing changes without a budget or with nothing held."""
    from harness.probe.budget import LARGE_HOLD_S

    clock = FakeClock(100.0)
    b = Budget.starting(20.0, clock=clock)
    ends, stop = b.ends, b.stop
    with b.holding(LARGE_HOLD_S["gpu"]):
        assert (b.ends, b.stop) == (ends - LARGE_HOLD_S["gpu"], stop - LARGE_HOLD_S["gpu"])
        clock.t = b.ends + 0.01  # the held time begins: a detector before the large one does not start
        assert b.spent()
    assert (b.ends, b.stop) == (ends, stop) and not b.spent()  # the large detector's own turn
    with b.holding(0.0):
        assert b.ends == ends
    free = Budget.starting(0, clock=clock)
    with free.holding(6.0):
        assert free.ends is None and free.stop is None


def test_the_time_held_is_the_most_a_later_detector_asks(monkeypatch):
    from harness.probe import worker
    from harness.probe.detectors import Detector

    fake = {"a": Detector("a", "", None), "b": Detector("b", "", None, holds=lambda ctx: 6.0),
            "c": Detector("c", "", None, holds=lambda ctx: 2.0)}
    monkeypatch.setattr(worker, "detectors", lambda: fake)
    assert worker.held(None, ["a", "b", "c"]) == 6.0
    assert worker.held(None, ["a", "c"]) == 2.0
    assert worker.held(None, ["a"]) == 0.0 and worker.held(None, []) == 0.0


def test_the_large_detector_holds_time_only_on_the_gpu_with_evidence_and_without_large(monkeypatch):
    from harness.probe import int32_offsets
    from harness.probe.budget import LARGE_HOLD_S
    from harness.probe.detectors import large
    from harness.run import triton_compat

    def ctx(backend, options=None):
        return SimpleNamespace(backend=backend, options=options or {}, board=Blackboard())

    monkeypatch.setattr(triton_compat, "launched_kernels", lambda: ["k"])
    monkeypatch.setattr(int32_offsets, "here", lambda c: [{"kernel": "k", "pointer": "x_ptr"}])
    assert large._holds(ctx("gpu")) == LARGE_HOLD_S["gpu"]
    assert large._holds(ctx("interpreter")) == 0.0  # no run there: a note
    assert large._holds(ctx("gpu", {"large": True})) == 0.0  # --large keeps its own time, outside the budget
    monkeypatch.setattr(int32_offsets, "here", lambda c: [])
    assert large._holds(ctx("gpu")) == 0.0  # no evidence: no run, nothing kept
    monkeypatch.setattr(triton_compat, "launched_kernels", lambda: [])
    c = ctx("gpu")
    assert large._holds(c) == 0.0 and c.board.large_hold is None  # nothing launched yet: asked again later


def test_once_a_result_is_wrong_no_detector_starts_inside_the_time_kept_for_the_diagnosis(monkeypatch):
    """torchrec's TBE on the 2 x H200 board: the reference saw the defaults wrong, and the GPU's layout and special
    detectors started one after another inside the diagnosis' reserve and ran to the budget's end; the diagnosis,
    the one detector that says why, was skipped and no class was named. Now, once a result was seen wrong, a
    detector before the diagnosis does not start inside its reserve (with the reason); before any wrong result, or
    before the reserve, it runs as before."""
    from harness.probe import worker
    from harness.probe.budget import RESERVED
    from harness.probe.detectors import Detector

    ran = []
    once = Detector("layout", "one run", lambda ctx: ran.append(ctx.budget.now()) or [])
    monkeypatch.setattr(worker, "detectors", lambda: {"layout": once})
    ctx = _budget_ctx("gpu", stop_in=5.0)  # 5 s left, 8 s kept for the diagnosis
    events = []
    assert worker.run_one(ctx, "layout", lambda **e: events.append(e), timeout=60.0, reserve=8.0) == []
    assert len(ran) == 1  # nothing wrong yet: the time goes to finding, the reserve does not count
    ctx.board.failing = {"n": 8}  # the reference's error at the defaults
    worker.run_one(ctx, "layout", lambda **e: events.append(e), timeout=60.0, reserve=8.0)
    assert len(ran) == 1 and {"event": "skipped", "detector": "layout", "reason": RESERVED} in events
    worker.run_one(ctx, "layout", lambda **e: events.append(e), timeout=60.0, reserve=0.0)
    assert len(ran) == 2  # the diagnosis itself and what comes after it keep no reserve
    ctx = _budget_ctx("gpu", stop_in=10.0)
    ctx.board.failing = {"n": 8}
    worker.run_one(ctx, "layout", lambda **e: None, timeout=60.0, reserve=2.0)
    assert len(ran) == 3  # wrong, but 10 s left and 2 s kept: it starts


def test_shape_fuzzing_cut_before_its_first_size_says_so_not_that_there_were_no_sizes(monkeypatch):
    """A board row (2 x H200, 75051e9) read "no sizes to fuzz (no integer sizes)" for a launcher with two sizes: the
    budget's end had stopped fuzzing before its first one. The note names the cut and the sizes planned."""
    from harness.probe.context import Context
    from harness.probe.detectors import shapes

    ran = []
    monkeypatch.setattr(shapes, "_memo", lambda ctx, memo, sizes: ran.append(sizes))
    planned = [{"n": 1, "k": 2}, {"n": 3, "k": 2}, {"n": 5, "k": 4}]
    monkeypatch.setattr(shapes, "_plan", lambda ctx: {"sizes": planned, "tried": 0, "seconds": 0.0, "memo": {},
                                                      "classes": {}, "reported": set(), "cut": False})
    monkeypatch.setattr(shapes, "_refusals", lambda ctx: [])
    clock = FakeClock()
    ctx = Context(target=None, backend="interpreter", seed=0, name="shapes", options={"empty": False},
                  budget=Budget(clock=clock, ends=clock.t + 4))
    ctx.budget.tuned(6.0)  # its first size would tune past the budget's end
    (note,) = shapes.fuzz_sizes(ctx)
    assert ran == [] and note.code == "P000" and note.severity == "info"
    assert "before its first size (3 planned)" in note.message and "no integer sizes" not in note.message
    ctx.budget = Budget(clock=clock, ends=clock.t + 4)
    monkeypatch.setattr(shapes, "_plan", lambda ctx: {"sizes": [], "tried": 0, "seconds": 0.0, "memo": {},
                                                      "classes": {}, "reported": set(), "cut": False})
    (note,) = shapes.fuzz_sizes(ctx)
    assert note.message == "no sizes to fuzz (no integer sizes)"
