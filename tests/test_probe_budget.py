"""The probe's budget (``--budget``): the detectors stop starting runs at its end, the diagnosis
keeps its share, and the report says what the budget cut short."""

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from harness import probe
from harness.probe import runner
from harness.probe.detectors import diagnose

ROOT = Path(__file__).resolve().parents[1]
CASE = ROOT / "cases" / "add-missing-mask"


def fuzzed(report):
    return report.meta["interpreter"]["seen"]["fuzz"]


def test_a_short_budget_cuts_shape_fuzzing_and_the_report_says_so():
    kw = dict(inputs=str(CASE / "case.py"), launcher="add", backends=["interpreter"], detectors=["shapes"])
    whole = probe(str(CASE / "fixed.py"), budget=0, **kw)
    assert whole.ok and fuzzed(whole)["tried"] == fuzzed(whole)["planned"] > 8, whole.text()
    assert not whole.cut_short() and whole.to_json()["budget"] == 0
    # spent about when the worker starts: shape fuzzing does not run, or is stopped, or starts one size
    short = probe(str(CASE / "fixed.py"), budget=1.6, **kw)
    assert short.to_json()["budget"] == 1.6
    [status] = [st for _, d, _, st in short.ran]
    assert status in ("skipped: the probe's budget is spent", runner.CUT, "done"), status
    assert status != "done" or fuzzed(short)["tried"] == 1 < fuzzed(short)["planned"], short.text()
    # with a slower kernel, a few of its sizes: the report says how far it got
    slow = probe(str(ROOT / "tests" / "probe_fixtures" / "budget" / "slow_double.py"), backends=["interpreter"],
                 detectors=["shapes"], budget=6.0)
    assert 0 < fuzzed(slow)["tried"] < fuzzed(slow)["planned"], slow.text()
    assert "shape fuzzing on the interpreter tried" in slow.text() and "--budget 60" in slow.text()


def test_the_budget_cut_still_catches_what_the_first_sizes_show():
    # the defaults come first: a bug they show is found under any budget
    r = probe(str(CASE / "broken.py"), inputs=str(CASE / "case.py"), launcher="add", backends=["interpreter"],
              detectors=["reference", "guards"], budget=1.6)
    assert not r.ok, r.text()


def test_the_diagnosis_keeps_its_share_of_a_short_budget_and_its_own_time_of_a_long_one():
    ctx = lambda backend, budget: SimpleNamespace(backend=backend, options={"budget": budget})  # noqa: E731
    assert diagnose.reserve(ctx("gpu", 10.0)) == diagnose.RESERVE_SHARE * 10.0 < diagnose.BUDGET_S["gpu"]
    assert diagnose.reserve(ctx("interpreter", 20.0)) == diagnose.RESERVE_SHARE * 20.0 < diagnose.BUDGET_S["interpreter"]
    assert diagnose.reserve(ctx("interpreter", 60.0)) == diagnose.BUDGET_S["interpreter"]
    assert diagnose.reserve(ctx("gpu", 0.0)) == 0.0 and diagnose.reserve(SimpleNamespace(backend="gpu", options={})) == 0


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
    import time

    from harness.probe.context import Context

    ctx = Context(target=None, backend="gpu", seed=0, name="shapes")
    ctx.ends, ctx.reserve = time.monotonic() + 5, 10.0  # inside the reserve already
    assert not ctx.late()  # all right so far: the time goes to finding
    ctx.seen["wrong_now"] = True  # shape fuzzing met a wrong result: wrap up, the diagnosis needs the rest
    assert ctx.late()
    ctx.seen.pop("wrong_now")
    ctx.seen["failing"] = {"n": 3}  # an earlier detector's error
    assert ctx.late() and ctx.wrap_up_by() == ctx.ends - ctx.reserve
    ctx.ends = time.monotonic() - 1  # the budget spent: late whatever was seen
    ctx.seen.clear()
    ctx.deadline = ctx.ends
    assert ctx.late()


# --- a GPU kernel that never returns, under a budget ------------------------------------------------------


def _silent_worker(tmp_path, *kinds):
    """A process that reports events of ``kinds`` (a detector's start, a call of the launcher), then
    shows nothing: as a GPU kernel that spins, or a slow step between calls."""
    events = tmp_path / "events.jsonl"
    lines = "".join(f'{{"event": "{k}"}}\\n' for k in kinds)
    code = f"import time; open({str(events)!r}, 'a').write('{lines}'); time.sleep(60)"
    return subprocess.Popen([sys.executable, "-c", code], start_new_session=True), str(events)


def test_under_a_budget_a_call_that_does_not_return_is_ended_at_the_budgets_end_not_the_timeout(tmp_path,
                                                                                              monkeypatch):
    import time

    from harness.run import isolate

    monkeypatch.setattr(isolate, "HANG_FLOOR_S", 1.0)
    proc, events = _silent_worker(tmp_path, "start", "calling")
    res, t0 = isolate.Process(), time.monotonic()
    isolate._wait(proc, 60.0, res, events, until=t0 + 2.0)
    assert res.hung and time.monotonic() - t0 < 10, time.monotonic() - t0  # not the 60 s timeout
    assert 0.5 < res.silent < 10


def test_the_hang_clock_keeps_its_floor_after_the_last_sign_of_progress(tmp_path, monkeypatch):
    import time

    from harness.run import isolate

    monkeypatch.setattr(isolate, "HANG_FLOOR_S", 3.0)
    proc, events = _silent_worker(tmp_path, "start", "calling")
    res, t0 = isolate.Process(), time.monotonic()
    isolate._wait(proc, 60.0, res, events, until=t0)  # the budget already spent: the floor still holds
    assert res.hung and time.monotonic() - t0 >= 3.0 and res.silent >= 2.5


def test_a_slow_step_between_calls_keeps_the_whole_timeout_under_a_budget(tmp_path, monkeypatch):
    """Inputs past 2**31 elements, a float64 reference: slow, and no kernel of the user's runs."""
    import time

    from harness.run import isolate

    monkeypatch.setattr(isolate, "HANG_FLOOR_S", 0.5)
    proc, events = _silent_worker(tmp_path, "start", "calling", "called")
    res, t0 = isolate.Process(), time.monotonic()
    isolate._wait(proc, 4.0, res, events, until=t0 + 0.5)
    assert res.hung and time.monotonic() - t0 >= 4.0, time.monotonic() - t0  # the timeout, not the budget


def test_only_budgeted_gpu_processes_get_the_shorter_hang_clock():
    from harness.probe.runner import MARGIN_S, _hang_until

    w = {"backend": "gpu", "ends": 100.0, "detectors": ["reference", "shapes"]}
    assert _hang_until(w) == 100.0 + MARGIN_S
    assert _hang_until({**w, "stop": 100.7}) == 100.7  # where the worker stops what still runs: the report's margin
    assert _hang_until({**w, "backend": "interpreter"}) is None  # its detectors stop themselves (SIGALRM)
    assert _hang_until({**w, "ends": None}) is None  # --budget 0: the whole timeout
    assert _hang_until({**w, "detectors": ["large"]}) is None  # --large keeps its own time


def test_the_gpu_worker_marks_each_call_of_the_launcher(monkeypatch):
    from harness.probe import execute

    seen = []
    monkeypatch.setattr(execute, "ON_CALL", lambda **e: seen.append(e["event"]))
    monkeypatch.setattr(execute, "_compare", lambda *a, **k: None)  # the marks alone are tested here
    target = SimpleNamespace(launcher=lambda x: x * 2, reference=lambda x: x * 2)
    import torch

    execute.call(target, {"x": torch.ones(4)}, backend="interpreter", ref=torch.ones(4) * 2)
    assert seen == ["calling", "called"]
    boom = SimpleNamespace(launcher=lambda x: 1 / 0)
    execute.call(boom, {"x": torch.ones(4)}, backend="interpreter", ref=torch.ones(4))
    assert seen[2:] == ["calling", "called"]  # a launcher that raises ends its call too


def test_a_compilation_inside_a_call_is_not_a_hang_under_a_budget(tmp_path, monkeypatch):
    """An autotuned kernel compiles its configs inside the launcher's first call at a new size."""
    import time

    from harness.run import isolate

    monkeypatch.setattr(isolate, "HANG_FLOOR_S", 0.5)
    monkeypatch.setattr(isolate, "STARTUP_GRACE", 3.0)
    proc, events = _silent_worker(tmp_path, "start", "calling", "compiling")
    res, t0 = isolate.Process(), time.monotonic()
    isolate._wait(proc, 1.0, res, events, until=t0 + 0.5)
    assert res.hung and time.monotonic() - t0 >= 3.0, time.monotonic() - t0  # compiling's grace


def test_the_marks_say_when_the_worker_is_inside_a_call_and_not_compiling():
    from harness.run.isolate import _in_call

    assert _in_call([b"start", b"calling"], (False, False)) == (True, False)
    assert _in_call([b"calling", b"compiling"], (False, False)) == (True, True)
    assert _in_call([b"compiled"], (True, True)) == (True, False)  # the kernel runs now
    assert _in_call([b"calling", b"called"], (False, False)) == (False, False)
    assert _in_call([b"start"], (True, False)) == (True, False)  # other events change nothing


# --- the interpreter's side, once the GPU's side hung ------------------------------------------------------


def test_a_call_inside_the_interpreter_is_stopped_once_the_gpus_side_hung(tmp_path, monkeypatch):
    """A spin lock spins in the interpreter too (its programs run one after another): once the GPU's
    side has shown that the kernel does not return, the interpreter's call need not wait its timeout."""
    import threading
    import time

    from harness.probe.runner import _stop_when
    from harness.run import isolate

    monkeypatch.setattr(isolate, "HANG_FLOOR_S", 1.0)
    hung = threading.Event()
    stop = _stop_when("interpreter", hung)
    assert _stop_when("gpu", hung) is None and _stop_when("interpreter", None) is None
    proc, events = _silent_worker(tmp_path, "start", "calling")
    threading.Timer(0.5, hung.set).start()
    res, t0 = isolate.Process(), time.monotonic()
    isolate._wait(proc, 60.0, res, events, stop=stop)
    assert not res.hung and res.stopped >= 1.0 and time.monotonic() - t0 < 10, (res, time.monotonic() - t0)


def test_the_interpreter_is_not_stopped_between_calls_or_before_the_gpu_hung(tmp_path, monkeypatch):
    import threading
    import time

    from harness.probe.runner import _stop_when
    from harness.run import isolate

    monkeypatch.setattr(isolate, "HANG_FLOOR_S", 0.2)
    hung = threading.Event()
    hung.set()
    proc, events = _silent_worker(tmp_path, "start", "calling", "called")  # a slow step after its call
    res, t0 = isolate.Process(), time.monotonic()
    isolate._wait(proc, 2.0, res, events, stop=_stop_when("interpreter", hung))
    assert res.hung and not res.stopped and time.monotonic() - t0 >= 2.0  # its own timeout, as before
    proc, events = _silent_worker(tmp_path, "calling")
    res = isolate.Process()
    isolate._wait(proc, 2.0, res, events, stop=_stop_when("interpreter", threading.Event()))  # the GPU is fine
    assert res.hung and not res.stopped


def test_a_stopped_interpreter_call_is_a_note_and_the_rest_are_not_run():
    from harness.probe.findings import INFO
    from harness.probe.runner import ProbeEvents, _died
    from harness.run.isolate import Process

    results, todo = {}, ["reference", "guards"]
    ev = ProbeEvents(started=["reference"], clock={"reference": [None, None]})
    _died(results, todo, ev, Process(returncode=-15, stopped=12.0), "interpreter", 30.0, 12.5, lambda m: None)
    (f,), status, _ = results["reference"]
    assert status == "stopped" and f.code == "P002" and f.severity == INFO and "did not return on the GPU" in f.message
    assert results["guards"][1] == "not run" and results["guards"][0][0].severity == INFO and not todo


# --- an autotuned kernel re-tunes at each new size ---------------------------------------------------------


def test_under_a_budget_no_run_starts_that_a_new_tuning_would_carry_past_its_end(monkeypatch):
    import time

    from harness.probe import execute
    from harness.probe.context import Context

    monkeypatch.setattr(execute, "LONGEST_TUNING", [6.0])  # the first tuning took 6 s
    ctx = Context(target=None, backend="gpu", seed=0, name="shapes")
    ctx.ends = time.monotonic() + 4
    assert ctx.run_cost() == 6.0 and ctx.late()  # a new size would tune again: 6 s, past the budget's end
    monkeypatch.setattr(execute, "LONGEST_TUNING", [0.0])  # nothing tuned: the time goes to finding
    assert ctx.run_cost() == 0.0 and not ctx.late()
    monkeypatch.setattr(execute, "LONGEST_TUNING", [6.0])
    ctx.ends = None  # no budget: each detector keeps to its own time
    assert not ctx.late()


def test_the_longest_tuning_inside_a_call_is_measured_not_the_call(monkeypatch):
    """A glue that imports its upstream package in the launcher's first call (seconds) has tuned nothing."""
    import time

    import torch

    from harness.probe import execute
    from harness.run.triton_compat import TuningCounter, _timed

    counter = TuningCounter()
    monkeypatch.setattr(execute, "TUNING", counter)
    monkeypatch.setattr(execute, "LONGEST_TUNING", [0.0])
    monkeypatch.setattr(execute, "_compare", lambda *a, **k: None)
    bench = _timed(lambda: time.sleep(0.3), counter)  # autotune benchmarking its configs
    tunes = SimpleNamespace(launcher=lambda x: bench() or x)
    execute.call(tunes, {"x": torch.ones(4)}, backend="interpreter", ref=torch.ones(4))
    slow = SimpleNamespace(launcher=lambda x: time.sleep(0.6) or x)  # an import, a slow launcher: no tuning
    execute.call(slow, {"x": torch.ones(4)}, backend="interpreter", ref=torch.ones(4))
    assert 0.3 <= execute.longest_tuning() < 0.6 and counter.seconds >= 0.3


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
    import time

    from harness.probe import execute
    from harness.probe.context import Context
    from harness.probe.detectors import shapes

    ran = []
    monkeypatch.setattr(shapes, "_memo", lambda ctx, memo, sizes: ran.append(sizes))
    monkeypatch.setattr(execute, "LONGEST_TUNING", [6.0])
    ctx = Context(target=None, backend="gpu", seed=0, name="shapes")
    ctx.ends = time.monotonic() + 4

    def state():
        return {"sizes": [{"n": 1}, {"n": 2}], "tried": 0, "seconds": 0.0, "memo": {}, "classes": {}}

    st = state()
    shapes._try_sizes(ctx, st)
    assert ran == [] and st["cut"] and ctx.seen["fuzz"]["tried"] == 0  # left to shapes-rest, which has no time either
    monkeypatch.setattr(execute, "LONGEST_TUNING", [0.0])  # nothing tuned: its first size runs whatever the time
    st = state()
    shapes._try_sizes(ctx, st)
    assert ran == [{"n": 1}, {"n": 2}]


def test_the_diagnosis_leaves_a_third_of_the_time_to_the_sizes_shape_fuzzing_left(monkeypatch):
    """bugs/bitsandbytes-4bit-odd-length-last-element: its own bug shows only at sizes after the
    first failure (a bug the fixed version shares), which shapes-rest reaches after the diagnosis."""
    import time

    from harness.probe import experiments, kernels
    from harness.probe.context import Context

    monkeypatch.setattr(experiments, "registry", lambda: {})
    monkeypatch.setattr(kernels, "known_facts", lambda ctx: ctx.seen)

    def deadline(later):
        ctx = Context(target=None, backend="gpu", seed=0, name="diagnose", later=later)
        ctx.seen["failing"], ctx.ends = {"n": 1}, time.monotonic() + 9
        diagnose.run(ctx)
        return ctx.deadline - time.monotonic()

    assert 5.0 < deadline({"shapes": {}}) <= 6.0  # two thirds of the 9 s left
    assert 7.0 < deadline({}) <= diagnose.BUDGET_S["gpu"]  # nothing left to fuzz: its own time
    assert 7.0 < deadline({"shapes": None}) <= diagnose.BUDGET_S["gpu"]  # shape fuzzing ran all its sizes


def _budget_ctx(backend="interpreter", stop_in=0.3):
    import time

    from harness.probe.context import Context

    ctx = Context(target=SimpleNamespace(kernel=SimpleNamespace(), sizes={"n": 8}), backend=backend, seed=0, name="",
                  options={"budget": 20.0})
    ctx.ends = ctx.stop = time.monotonic() + stop_in
    return ctx


def test_a_detector_still_running_at_the_budgets_end_is_stopped_and_keeps_what_it_found(monkeypatch):
    """The budget is a wall-clock promise: a run started just before its end does not carry the
    probe past it (the GPU board's probes overran it by up to 1.7 s before this stop)."""
    import time

    from harness.probe import worker
    from harness.probe.detectors import Detector
    from harness.probe.findings import ERROR, Finding

    def forever(ctx):
        while True:
            time.sleep(0.01)

    kept = Finding("P401", "slow", "interpreter", "wrong at n=3", severity=ERROR, sizes={"n": 3})
    slow = Detector("slow", "never ends", forever, partial=lambda ctx: [kept])
    monkeypatch.setattr(worker, "detectors", lambda: {"slow": slow})
    events = []
    ctx = _budget_ctx()
    t0 = time.monotonic()
    found = worker.run_one(ctx, "slow", lambda **e: events.append(e), timeout=60.0)
    assert time.monotonic() - t0 < 1.0
    assert found[0] is kept and found[1].code == "P000" and found[1].severity == "info"
    assert "stopped at the end of the probe's budget" in found[1].message
    assert {"event": "cut", "detector": "slow"} in events and events[-1] == {"event": "end", "detector": "slow"}
    assert ctx.seen["failing"] == {"n": 3}  # the diagnosis, had it time, would start there

    # one that starts after the stop does not run at all; one with no partial keeps nothing but the note
    events.clear()
    assert worker.run_one(ctx, "slow", lambda **e: events.append(e), timeout=60.0) == []
    assert {"event": "skipped", "detector": "slow", "reason": "the probe's budget is spent"} in events
    bare = Detector("slow", "never ends", forever)
    monkeypatch.setattr(worker, "detectors", lambda: {"slow": bare})
    found = worker.run_one(_budget_ctx(), "slow", lambda **e: None, timeout=60.0)
    assert [f.code for f in found] == ["P000"]
    # a partial that fails is the detector's own failure (an error event), not the worker's end
    broken = Detector("slow", "never ends", forever, partial=lambda ctx: 1 / 0)
    monkeypatch.setattr(worker, "detectors", lambda: {"slow": broken})
    events.clear()
    found = worker.run_one(_budget_ctx(), "slow", lambda **e: events.append(e), timeout=60.0)
    assert [f.code for f in found] == ["P000"] and events[-1] == {"event": "end", "detector": "slow"}
    assert any(e["event"] == "error" and "ZeroDivisionError" in e["message"] for e in events)


def test_the_detectors_own_timeout_is_still_a_hang_before_the_budgets_end(monkeypatch):
    import time

    from harness.probe import worker
    from harness.probe.detectors import Detector

    def forever(ctx):
        while True:
            time.sleep(0.01)

    monkeypatch.setattr(worker, "detectors", lambda: {"slow": Detector("slow", "never ends", forever)})
    found = worker.run_one(_budget_ctx(stop_in=30.0), "slow", lambda **e: None, timeout=0.3)
    assert [(f.code, f.severity) for f in found] == [("P002", "error")]
    unbudgeted = Detector("slow", "its own sizes and time", forever, budgeted=False)
    monkeypatch.setattr(worker, "detectors", lambda: {"slow": unbudgeted})
    found = worker.run_one(_budget_ctx(stop_in=0.05), "slow", lambda **e: None, timeout=0.5)
    assert [f.code for f in found] == ["P002"]  # --large keeps to its own time, not the budget


def test_shape_fuzzing_stopped_at_the_budgets_end_reports_each_failure_it_met_unshrunk():
    from harness.probe.detectors import shapes
    from harness.probe.findings import ERROR, Finding

    ctx = _budget_ctx()
    grid = Finding("P403", "shapes", "interpreter", "grid past 65,535", severity=ERROR)
    st = {"classes": {("wrote outside", frozenset()): ({"n": 1}, "wrote outside a tensor", 1),
                      ("wrong result", frozenset()): ({"n": 1001}, "1 of 1001 differ", 7)},
          "reported": {("wrote outside", frozenset())}}
    ctx.later["shapes-now"] = {"grid": [grid], "st": st}
    found = shapes.partial(ctx)
    assert found[0] is grid and len(found) == 2 and "shapes-now" not in ctx.later
    assert found[1].code == "P401" and found[1].sizes == {"n": 1001} and "not shrunk" in found[1].message
    assert "smallest" not in found[1].message
    assert shapes.partial(ctx) == []  # nothing running: nothing kept


def test_the_diagnosis_keeps_each_experiments_evidence_as_it_goes(monkeypatch):
    from harness.probe import experiments, kernels
    from harness.probe.context import BudgetSpent
    from harness.probe.detectors import diagnose

    def budget_ends(ctx, failing):
        raise BudgetSpent

    exps = {"first": SimpleNamespace(run=lambda ctx, failing: {"tail": "wrong at n=7 only"}),
            "second": SimpleNamespace(run=budget_ends)}
    monkeypatch.setattr(experiments, "registry", lambda: exps)
    monkeypatch.setattr(kernels, "known_facts", lambda ctx: ctx.seen.update(atomics=True))
    ctx = _budget_ctx(backend="gpu", stop_in=30.0)
    ctx.seen["failing"] = {"n": 7}
    try:
        diagnose.run(ctx)
    except BudgetSpent:
        pass
    else:
        raise AssertionError("the budget's end must reach the worker")
    assert ctx.seen["evidence"] == {"tail": "wrong at n=7 only"} and ctx.seen["experiments"][0].startswith("first")
    assert diagnose.DETECTOR.partial(ctx) == [] and ctx.seen["evidence"]["atomics"] == "the kernels use atomics"


def test_a_detector_cut_at_the_budgets_end_has_its_status_and_is_not_an_answer():
    from harness.commands.probe import RAN
    from harness.probe import runner

    ev = runner._events(SimpleNamespace(events=[{"event": "start", "detector": "shapes", "t": 1.0},
                                                {"event": "cut", "detector": "shapes"},
                                                {"event": "end", "detector": "shapes", "t": 3.5}]))
    results = {}
    runner._collect(results, ["shapes"], ev, SimpleNamespace(output_tail=""), "interpreter", 0.0, None)
    assert results["shapes"][1] == runner.CUT and results["shapes"][2] == 2.5
    assert runner.CUT not in RAN  # a probe whose every detector was cut checked nothing: not exit 0


def test_the_defaults_runs_finish_whatever_the_budget_and_the_rest_stop_at_its_end():
    """Every probe needs one answer, the defaults' runs (plain and in guard bands); shape fuzzing,
    a size at a time for a kernel that takes 0.3 s a call, is stopped at the budget's end, with
    its sizes so far reported and the wall clock kept."""
    from harness.probe.detectors import guards, reference, shapes

    assert reference.DETECTOR.finishes and guards.DETECTOR.finishes and not shapes.DETECTOR.finishes
    slow = str(ROOT / "tests" / "probe_fixtures" / "budget" / "slow_double.py")
    r = probe(slow, backends=["interpreter"], detectors=["reference", "shapes"], budget=5.0)
    status = {d: st for _, d, _, st in r.ran}
    assert status["reference"] == "done" and r.ok, r.text()
    fuzz = fuzzed(r)
    assert fuzz["tried"] < fuzz["planned"] and any("shape fuzzing on the interpreter tried" in x for x in r.cut_short())
    assert status["shapes"] in ("done", runner.CUT, "skipped: the probe's budget is spent")
    assert r.seconds < 5.0 + 1.0, r.seconds  # the old rule (stop starting runs) let a run carry it past
