"""``harness probe``: every detector on a kernel of one's own, on the CPU (interpreter).

Each probe below starts worker processes, so the tests name only the detectors they
need and use small sizes. examples/probe_cases.py runs the full probe on every case
and writes docs/probe-cases.md.
"""

import contextlib
import io
import subprocess
import sys
from pathlib import Path

import pytest

from harness import probe
from harness.cli import main
from harness.probe import fuzz
from harness.probe.findings import INFO, WARNING

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases"
EXAMPLE = ROOT / "examples" / "rownorm" / "probe_rownorm.py"


def case_probe(slug, variant, launcher, **kw):
    return probe(str(CASES / slug / f"{variant}.py"), inputs=str(CASES / slug / "case.py"), launcher=launcher, **kw)


def line_of(path, text, nth=0):
    """``file:line`` of the nth line of ``path`` that holds ``text`` (cases are edited: never a fixed number)."""
    hits = [i for i, line in enumerate(Path(path).read_text().splitlines(), 1) if text in line]
    return f"{Path(path).relative_to(ROOT)}:{hits[nth]}"


def codes(report):
    return {f.code for f in report.problems}


def test_memcheck_locates_the_unmasked_accesses_of_add_missing_mask():
    r = case_probe("add-missing-mask", "broken", "add", detectors=["memcheck", "guards"], sizes={"n": 2051})
    store = r.by_code("P101")
    src = CASES / "add-missing-mask" / "broken.py"
    assert store and store[0].line == line_of(src, "tl.store("), r.text()
    assert store[0].programs == ["2"] and "past the end of 'out_ptr'" in store[0].message
    assert {f.line for f in r.by_code("P102")} == {line_of(src, "tl.load("), line_of(src, "tl.load(", 1)}
    assert r.by_code("P111"), r.text()  # the guard band around out changed too
    assert any(c["slug"] == "add-missing-mask" for c in store[0].cases)
    fixed = case_probe("add-missing-mask", "fixed", "add", detectors=["memcheck", "guards"], sizes={"n": 2051})
    assert fixed.ok, fixed.text()


def test_race_detector_names_both_programs_and_the_line_and_is_quiet_on_the_fix():
    r = case_probe("nrm2-race", "broken", "nrm2", detectors=["race"], sizes={"n": 3001})
    race = r.by_code("P301")
    assert race and race[0].programs == ["0", "1"], r.text()
    assert race[0].line == line_of(CASES / "nrm2-race" / "broken.py", "tl.store(") and "out_ptr[0]" in race[0].message
    assert any(c["slug"] == "nrm2-race" for c in race[0].cases)
    assert case_probe("nrm2-race", "fixed", "nrm2", detectors=["race"], sizes={"n": 3001}).ok


def test_program_orders_expose_float_atomic_order_dependence():
    r = case_probe("nrm2-atomic-order", "broken", "nrm2", detectors=["order"], sizes={"n": 5003})
    assert "P303" in codes(r), r.text()  # the case declares deterministic = true: a problem
    assert case_probe("nrm2-atomic-order", "fixed", "nrm2", detectors=["order"], sizes={"n": 5003}).ok


def test_shape_fuzzing_finds_the_smallest_failing_size_of_a_kernel_right_at_its_default():
    r = case_probe("grid-floor-division", "broken", "add", detectors=["reference", "shapes"], sizes={"n": 2048},
                   options={"fuzz_trials": 6}, seed=3)
    assert not r.by_code("P201"), r.text()  # n = 2048 is two whole blocks: right at the default size
    (f,) = r.by_code("P401")
    assert "smallest failing sizes n=1 " in f.message and "seed 3" in f.message, f.message
    assert f.defect_class == "unwritten-output"


def test_tf32_emulation_shows_matmul_tf32_default_on_a_cpu():
    sizes = {"m": 33, "n": 40, "k": 512}
    r = case_probe("matmul-tf32-default", "broken", "matmul", detectors=["reference"], sizes=sizes)
    (f,) = r.by_code("P204")
    assert f.line == line_of(CASES / "matmul-tf32-default" / "broken.py", "tl.dot("), f.line
    assert f.severity == WARNING and r.ok, r.text()  # Triton's default, left in place: a warning (issue #37)
    assert case_probe("matmul-tf32-default", "fixed", "matmul", detectors=["reference"], sizes=sizes).ok
    off = case_probe("matmul-tf32-default", "broken", "matmul", detectors=["reference"], sizes=sizes,
                     options={"tf32": False})
    assert off.ok, off.text()  # the interpreter's own exact fp32 dot hides it


def test_padding_contamination_is_caught_and_the_fix_is_quiet():
    sizes = {"n_rows": 4, "n_cols": 100}
    r = case_probe("softmax-mask-fill-zero", "broken", "softmax", detectors=["reference"], sizes=sizes)
    assert codes(r) & {"P201", "P203"}, r.text()
    assert case_probe("softmax-mask-fill-zero", "fixed", "softmax", detectors=["reference"], sizes=sizes).ok


def test_a_plain_tensor_probe_file_gets_located_out_of_bounds_findings_and_its_fix_none():
    r = probe(str(EXAMPLE), detectors=["memcheck", "race", "guards"])
    (load,) = r.by_code("P102")
    src = EXAMPLE.parent / "rownorm.py"
    assert load.line == line_of(src, "the tail reads the next row") and load.programs == ["36"], r.text()
    assert r.by_code("P101")[0].line == line_of(src, "the tail writes the next row")
    assert r.by_code("P301") and r.by_code("P111")
    fixed = probe(str(EXAMPLE), launcher="launch_fixed", options={"fuzz_trials": 6})
    assert fixed.ok and all(f.severity == INFO for f in fixed.findings), fixed.text()
    assert {d for _, d, _, _ in fixed.ran} >= {"reference", "guards", "memcheck", "race", "order", "shapes"}


def _cli(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("body, says", [
    (None, "no such file"),
    ("def make_inputs(*, device, gen):\n    return {}\ndef reference():\n    return 0\n", "defines no launcher 'launch'"),
    ("def launch():\n    pass\ndef reference():\n    return 0\n", "defines no make_inputs()"),
    ("raise RuntimeError('boom at import')\n", "raised RuntimeError at import: boom at import"),
    ("def launch():\n    pass\ndef make_inputs(*, device, gen):\n    return {}\n", "defines no reference()"),
    ("import no_such_module_here\n", "raised ModuleNotFoundError at import"),
    ("import sys\nsys.exit(3)\n", "raised SystemExit at import"),
    ("def launch(x):\n    pass\ndef make_inputs(*, device, gen, n):\n    return {}\ndef reference(x):\n    return x\n",
     "make_inputs needs n"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, body, says):
    path = tmp_path / "mine.py"
    if body is not None:
        path.write_text(body)
    code, out, err = _cli(["probe", str(path), "--backend", "interpreter", "--only", "reference", "-q"])
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and says in err and "Traceback" not in err, err


@pytest.mark.parametrize("option", [["--timeout", "nan"], ["--timeout", "inf"], ["--timeout", "-1"],
                                    ["--timeout", "0"], ["--only", ""], ["--only", ","],
                                    ["--timeout", "1e-9"], ["--timeout", "0.1"], ["--sizes", "=5"],
                                    ["--sizes", "n=5,n=6"], ["--sizes", "n rows=5"]])
def test_options_that_would_run_nothing_or_never_stop_are_bad_input(option):
    """A timeout of nan, inf, 0 or below, and a detector list naming none, are refused before
    anything runs: one line, exit 2 (not a finding about the kernel, not "no findings"). So are a
    timeout too short for a detector's first call (issue 42: a clean kernel got P001 and P002 errors
    at --timeout 1e-9 and 0.1), a size with no name and a size given twice."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), pytest.raises(SystemExit) as e:
        main(["probe", str(EXAMPLE), "--backend", "interpreter", "-q", *option])  # argparse's errors exit
    out, err = out.getvalue(), err.getvalue()
    assert e.value.code == 2 and out == "" and len(err.strip().splitlines()) == 1 and option[0] in err, err


def test_a_missing_inputs_file_is_one_line_and_exit_2(tmp_path):
    code, out, err = _cli(["probe", str(EXAMPLE), "--inputs", str(tmp_path / "nope.py"), "--backend", "interpreter",
                           "-q"])
    assert code == 2 and out == "" and "nope.py: no such file" in err and len(err.strip().splitlines()) == 1, err


def test_a_hanging_kernel_is_a_finding_and_the_detectors_after_it_are_skipped_not_waited_for(tmp_path):
    path = tmp_path / "hang.py"
    path.write_text("import torch\n"
                    "def launch(x):\n    while True:\n        pass\n"
                    "def make_inputs(*, device, gen, n=4):\n    return {'x': torch.zeros(n)}\n"
                    "def reference(x):\n    return x\n")
    r = probe(str(path), detectors=["reference", "guards", "memcheck"], timeout=3)
    # reference runs in one process, guards and memcheck in another: each process waits once
    assert sorted((f.detector, f.code) for f in r.findings) == [("guards", "P002"), ("reference", "P002")], r.text()
    assert "no result after 3s" in r.findings[0].message
    status = {name: st for _, name, _, st in r.ran}
    assert status["memcheck"] == "skipped: the kernel did not return in the guards detector", r.ran


def test_a_crashing_kernel_is_a_finding_and_the_other_detectors_still_run(tmp_path):
    path = tmp_path / "crash.py"
    path.write_text("import ctypes, torch\n"
                    "def launch(x):\n    ctypes.string_at(0)\n"
                    "def make_inputs(*, device, gen, n=4):\n    return {'x': torch.zeros(n)}\n"
                    "def reference(x):\n    return x\n")
    r = probe(str(path), detectors=["reference", "guards"], jobs=1)
    # each detector died in a process of its own; the same death is one finding naming both
    assert [(f.detector, f.code) for f in r.findings] == [("reference, guards", "P001")], r.text()
    assert "SIGSEGV" in r.findings[0].message


def test_fuzz_plan_covers_tails_and_several_programs_and_shrinks_to_the_smallest():
    sizes = fuzz.plan({"n": 100}, [64], {}, seed=0, trials=12)
    values = {s["n"] for s in sizes}
    assert 1 in values and values & {63, 65, 127, 129} and max(values) > 128
    assert fuzz.plan({"n": 100}, [64], {}, seed=0, trials=12) == sizes  # seeded
    pools = {"n": fuzz.candidates(1000, [64])}
    best, _ = fuzz.shrink({"n": 1000}, lambda s: s["n"] % 64 != 0, pools)
    assert best == {"n": 1}


def test_import_harness_stays_light_and_probe_is_callable():
    code = ("import sys, harness\nassert 'torch' not in sys.modules\n"
            "from harness import probe\nassert callable(probe)\nassert 'torch' not in sys.modules\n"
            "import harness.probe.runner\nfrom harness import probe as p2\nassert callable(p2)\nprint('ok')")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


# --- CUDA's grid limits, under the interpreter -------------------------------------------------------


def test_grid_past_cudas_y_limit_is_found_at_the_gpu_sizes_and_the_fix_is_quiet():
    """grid-y-over-65535 runs 50 rows on the interpreter; the shapes detector checks the launch's grid
    at the case's GPU sizes (70,000 rows) without running a program."""
    r = case_probe("grid-y-over-65535", "broken", "row_scale", detectors=["shapes"], options={"fuzz_trials": 2})
    (f,) = r.by_code("P403")
    assert f.line == line_of(CASES / "grid-y-over-65535" / "broken.py", "row_scale_kernel[grid]"), r.text()
    assert "grid (4, 70000, 1)" in f.message and "axis 1" in f.message and "65,535" in f.message, f.message
    assert "rows=70000" in f.message and f.severity == "error"
    assert any(c["slug"] == "grid-y-over-65535" for c in f.cases)
    fixed = case_probe("grid-y-over-65535", "fixed", "row_scale", detectors=["shapes"], options={"fuzz_trials": 2})
    assert fixed.ok and not fixed.by_code("P403"), fixed.text()


GRID_KERNEL = '''import torch, triton, triton.language as tl

@triton.jit
def fill(out_ptr):
    tl.store(out_ptr + tl.program_id(1), 1.0)

def launch(out):
    fill[(1, out.numel())](out)  # the launch line
    return out

def make_inputs(*, device, gen, n=70_000):
    return {"out": torch.zeros(n, device=device)}

def reference(out):
    return torch.ones_like(out)
'''


def test_a_launch_past_the_limit_is_refused_without_running_its_programs(tmp_path):
    """At the default sizes: the launch is reported (axis, grid, limit, line) and aborted at once,
    not run for 70,000 programs; information at a size past 65,535 for a size the user may meet."""
    path = tmp_path / "grid.py"
    path.write_text(GRID_KERNEL)
    r = probe(str(path), detectors=["reference", "memcheck"], timeout=60)
    assert [(f.detector, f.code) for f in r.problems] == [("reference", "P403"), ("memcheck", "P403")], r.text()
    f = r.problems[0]
    assert "grid (1, 70000, 1)" in f.message and "axis 1 (y)" in f.message and "65,535" in f.message, f.message
    launch = [i for i, line in enumerate(GRID_KERNEL.splitlines(), 1) if "# the launch line" in line][0]
    assert f.line.endswith(f"grid.py:{launch}"), f.line
    assert max(s for _, _, s, _ in r.ran) < 30  # 70,000 programs under the interpreter would take minutes


def test_each_size_alone_past_65535_is_information(tmp_path):
    path = tmp_path / "grid.py"
    path.write_text(GRID_KERNEL.replace("n=70_000", "n=100"))
    r = probe(str(path), detectors=["shapes"], options={"fuzz_trials": 2})
    (f,) = r.by_code("P403")
    assert f.severity == INFO and "n=65537" in f.message and r.ok, r.text()


# --- the GPU half's bookkeeping, with the worker processes faked (no GPU here) -------------------------


class FakeWorkers:
    """Stands in for ``run_process``: each call gets the next scripted (events, returncode, hung, output);
    a compute-sanitizer run's output is written to its --log-file, as compute-sanitizer does."""

    def __init__(self, script):
        self.script, self.calls = list(script), []

    def __call__(self, module, args, *, backend, timeout, extra_env=None, wrapper=None, on_poll=None, until=None,
                 stop=None, kill_at=None):
        from harness.run.isolate import Process

        self.calls.append({"args": args, "backend": backend, "timeout": timeout, "env": extra_env or {},
                           "wrapper": wrapper or [], "until": until, "kill_at": kill_at})
        events, code, hung, output = self.script.pop(0)
        if "--log-file" in (wrapper or []):
            Path(wrapper[wrapper.index("--log-file") + 1]).write_text(output)
            output = ""
        return Process(returncode=code, hung=hung, events=[dict(e) for e in events], output_tail=output)


def ran(*names, crash_in=None):
    evs = []
    for n in names:
        evs += [{"event": "start", "detector": n}, {"event": "end", "detector": n}]
    if crash_in:
        evs.append({"event": "start", "detector": crash_in})
    return evs


def _fake_probe(monkeypatch, script, detectors, **kw):
    from harness.run import gpu_tools as sanitizer
    from harness.probe import runner

    fake = FakeWorkers(script)
    monkeypatch.setattr(runner, "run_process", fake)
    monkeypatch.setattr(sanitizer, "compute_sanitizer", lambda: "/opt/cuda/bin/compute-sanitizer")
    return probe(str(EXAMPLE), backends=["gpu"], detectors=detectors, jobs=1, **kw), fake


def test_gpu_tools_run_the_reference_detector_under_the_tool_with_padding_off(monkeypatch):
    summary = ("========= Invalid __global__ read of size 4 bytes\n=========     at rownorm_kernel+0x1a0\n"
               "========= ERROR SUMMARY: 3 errors\n")
    r, fake = _fake_probe(monkeypatch, [
        (ran("reference"), 99, False, summary),
        (ran("reference") + [{"event": "finding", "detector": "reference", "code": "P001", "backend": "gpu",
                              "message": "the launcher raised: RuntimeError: device-side assert triggered"}],
         0, False, "x.py:9: rownorm_kernel: block: [0,0,0] Assertion `int32 overflow detected for operation "
                   "mul` failed.\n")], ["compute-sanitizer", "triton-debug"], timeout=20)
    cs, dbg = fake.calls
    assert cs["wrapper"][:3] == ["/opt/cuda/bin/compute-sanitizer", "--tool", "memcheck"]
    assert "--log-file" in cs["wrapper"] and cs["wrapper"][cs["wrapper"].index("--report-api-errors") + 1] == "no"
    assert cs["env"] == {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"} and dbg["env"] == {"TRITON_DEBUG": "1"}
    for c in (cs, dbg):
        assert c["args"]["detectors"] == ["reference"] and c["backend"] == "gpu"
        assert c["args"]["options"]["pad"] == 0
        assert c["timeout"] <= 20 + 120  # counted again from each detector's start
        assert c["kill_at"] is None  # --tools adds its own runs: not ended at the budget's end
    # compute-sanitizer is slow: the small sizes; int32 overflow needs TRITON_DEBUG at the full sizes
    assert cs["args"]["options"]["small"] is True and dbg["args"]["options"]["small"] is False
    (p601,) = r.by_code("P601")
    assert p601.detector == "compute-sanitizer" and "3 errors; first: Invalid __global__ read" in p601.message
    (p602,) = r.by_code("P602")
    assert "int32 overflow detected for operation mul" in p602.message
    assert not r.by_code("P001"), r.text()  # the tool's own finding says it; the crash is not repeated


def test_a_broken_cuda_context_restarts_the_rest_and_a_gpu_hang_stops_its_batch(monkeypatch):
    r, fake = _fake_probe(monkeypatch, [
        (ran("reference"), 4, False, ""),  # illegal address in reference: the worker ends after it (EXIT_CONTEXT)
        (ran("guards", crash_in="repeat"), None, True, ""),  # then a hang: killed
    ], ["reference", "shapes", "first-call", "repeat", "guards"], timeout=5)
    # the single runs at the default sizes first, then the open-ended search (shapes)
    assert [c["args"]["detectors"] for c in fake.calls] == [
        ["reference", "guards", "repeat", "first-call", "shapes"], ["guards", "repeat", "first-call", "shapes"]]
    status = {d: s for _, d, _, s in r.ran}
    assert status == {"reference": "done", "guards": "done", "repeat": "hang", "first-call": "not run",
                      "shapes": "not run"}, r.ran
    (hang,) = r.by_code("P002")
    assert hang.detector == "repeat" and "killed" in hang.message
    assert all(f.severity == INFO for f in r.findings if f.detector in ("first-call", "shapes"))


def _slow_workers(monkeypatch, seconds: float):
    """Each (fake) worker process takes ``seconds`` of the budget's clock, whatever the machine's speed."""
    from harness.probe import runner
    from harness.probe.budget import SystemClock

    clock = {"t": 1000.0}
    monkeypatch.setattr(SystemClock, "now", lambda self: clock["t"])
    fake_run = runner.run_process

    def slow(*a, **k):
        clock["t"] += seconds
        return fake_run(*a, **k)

    monkeypatch.setattr(runner, "run_process", slow)


def test_after_the_budget_is_spent_a_crash_starts_no_new_process(monkeypatch):
    from harness.probe import runner

    fake = FakeWorkers([(ran("reference"), 4, False, "")])  # the context broke after reference
    monkeypatch.setattr(runner, "run_process", fake)
    _slow_workers(monkeypatch, 25.0)  # spent before the process ended
    r = probe(str(EXAMPLE), backends=["gpu"], detectors=["reference", "repeat", "shapes"], jobs=1, budget=20)
    assert len(fake.calls) == 1
    status = {d: s for _, d, _, s in r.ran}
    assert status == {"reference": "done", "repeat": "not run", "shapes": "not run"}, r.ran
    assert all(f.severity == INFO and "budget" in f.message for f in r.findings if f.detector != "reference")
    # --large keeps its own time: it still gets a process of its own
    fake = FakeWorkers([(ran("reference"), 4, False, ""), (ran("large"), 0, False, "")])
    monkeypatch.setattr(runner, "run_process", fake)
    _slow_workers(monkeypatch, 25.0)
    r = probe(str(EXAMPLE), backends=["gpu"], detectors=["reference", "repeat", "large"], jobs=1, budget=20,
              options={"large": True})
    assert [c["args"]["detectors"] for c in fake.calls] == [["reference", "repeat", "large"], ["large"]]
    assert {d: s for _, d, _, s in r.ran}["repeat"] == "not run"


def test_without_compute_sanitizer_it_is_a_note(monkeypatch):
    from harness.run import gpu_tools as sanitizer
    from harness.probe import runner

    monkeypatch.setattr(runner, "run_process", FakeWorkers([]))
    monkeypatch.setattr(sanitizer, "compute_sanitizer", lambda: None)
    r = probe(str(EXAMPLE), backends=["gpu"], detectors=["compute-sanitizer"])
    assert not r.ok and not r.checked  # nothing was checked: not ok (issue 42)
    assert "compute-sanitizer not found" in r.findings[0].message and r.ran[0][3] == "not run"


def test_a_case_that_needs_two_gpus_is_one_note_on_a_machine_with_fewer():
    r = case_probe("tensor-on-other-device", "broken", "swiglu", backends=["gpu"], detectors=["reference"])
    (f,) = r.findings
    assert not r.ok and not r.checked and not r.errors, r.text()  # nothing ran: not ok (issue 42)
    assert f.severity == INFO and "needs 2 GPUs" in f.message and "this machine has" in f.message, r.text()
    assert r.meta["gpu"]["unavailable"] and r.ran == [("gpu", "all", 0.0, "not run")]


def test_the_sizes_each_gpu_run_uses():
    from harness.probe.target import Unavailable, load

    t = load(str(CASES / "grid-y-over-65535" / "broken.py"), str(CASES / "grid-y-over-65535" / "case.py"),
             "row_scale", "interpreter")
    assert t.sizes == {"rows": 50, "cols": 200} and t.gpu_sizes == {"rows": 70_000, "cols": 200}
    assert t.small_sizes == {"rows": 50, "cols": 200}
    g = load(str(CASES / "attention-seq-tail" / "broken.py"), str(CASES / "attention-seq-tail" / "case.py"),
             "attention", "gpu")
    assert g.small_sizes != g.sizes  # [sizes.sanitizer] for the GPU tools
    with pytest.raises(Unavailable):
        load(str(CASES / "tensor-on-other-device" / "broken.py"), str(CASES / "tensor-on-other-device" / "case.py"),
             "swiglu", "gpu")
    with pytest.raises(Unavailable, match="interpreter = \"skip\": the interpreter has no CUDA streams"):
        load(str(CASES / "stream-no-sync" / "broken.py"), str(CASES / "stream-no-sync" / "case.py"),
             "matmul_relu", "interpreter")


def test_backends_that_disagree_are_information():
    from harness.probe.findings import Finding
    from harness.probe.runner import ProbeReport, _backends_differ

    r = ProbeReport("k.py", findings=[Finding("P001", "reference", "gpu", "illegal address")],
                    ran=[("gpu", "reference", 1.0, "done"), ("interpreter", "reference", 1.0, "done"),
                         ("gpu", "repeat", 1.0, "done")])
    (f,) = _backends_differ(r)
    assert f.code == "P205" and f.severity == INFO and "reference: P001 on the GPU only" in f.message
    assert not _backends_differ(ProbeReport("k.py", ran=r.ran))


def test_sizes_triton_will_not_compile_are_information_not_a_wrong_result():
    """On a GPU, ``tl.dot`` refuses a dimension under 16 and autotune may prune every config at
    an odd size: the kernel's limits, not bugs (the interpreter enforces neither)."""
    from triton.compiler.errors import CompilationError

    from harness.probe.detectors.shapes import refused

    assert refused(CompilationError("k.py", None, "tl.dot: K must be >= 16"))
    assert refused(RuntimeError("Autotuner error: No valid autotuner configs after pruning."))
    assert not refused(RuntimeError("CUDA error: an illegal memory access was encountered"))
    assert not refused(ZeroDivisionError("integer division or modulo by zero"))

    def launcher(s_q, s_k):
        assert s_k >= s_q, "causal attention with a cache: the queries are the last S_q positions"

    try:
        launcher(1000, 1)
    except AssertionError as e:
        assert refused(e)  # the launcher's precondition: it refuses the sizes
    import triton.runtime.interpreter as interp

    import triton.language as tl

    try:  # raised by triton.language: not a valid program (a GPU compile refuses it too)
        tl.arange(0, 3)
    except ValueError as e:
        assert refused(RuntimeError("wrapped, as the interpreter wraps it")) is False
        try:
            raise RuntimeError("InterpreterError") from e
        except RuntimeError as wrapped:
            assert refused(wrapped)
    try:  # what the interpreter raises for a failed tl.device_assert: a bug, not a refusal
        interp.InterpreterBuilder.create_assert(None, False, "index out of range")
    except AssertionError as e:
        assert not refused(e)


ASSUMES_CONTIGUOUS_ROWS = '''
import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + offs, mask=offs < n_cols, other=0.0)  # the row stride taken as n_cols
    tl.store(out_ptr + row, tl.sum(x))


def launch(x, out):
    row_sum_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def make_inputs(*, device, gen, rows=4, cols=12):
    rows_of_16 = torch.randn(rows, 16, generator=gen).to(device)
    return {"x": rows_of_16[:, :cols], "out": torch.empty(rows, device=device)}  # a view: row stride 16


def reference(x):
    return x.double().sum(dim=1)
'''


def test_inputs_keep_their_layout_so_a_kernel_that_assumes_contiguity_is_caught(tmp_path):
    """The probe copies each input for each run; a copy must keep the view's strides (clone()
    would make it contiguous, and the kernel's wrong row stride would then be right)."""
    path = tmp_path / "rows.py"
    path.write_text(ASSUMES_CONTIGUOUS_ROWS)
    r = probe(str(path), detectors=["reference"])
    # the gaps between the rows are poison in the probe's copy: the rows it reads there come back NaN
    assert "P112" in {f.code for f in r.problems}, [f.code for f in r.findings]


def test_the_gpu_tools_are_opt_in_and_say_so(monkeypatch):
    """compute-sanitizer and TRITON_DEBUG take 20 to 130 s a kernel: the probe runs them with
    --tools (options["tools"]) or when named, and otherwise lists them as skipped, with why."""
    from harness.probe import runner
    from harness.probe.request import ProbeRequest

    assert not runner._wanted("compute-sanitizer", None, {}) and not runner._wanted("triton-debug", None, {})
    assert runner._wanted("compute-sanitizer", None, {"tools": True}) and runner._wanted("reference", None, {})
    assert runner._wanted("triton-debug", ["triton-debug"], {})
    asked = []
    monkeypatch.setattr(runner.Batch, "run", lambda batch: (asked.extend(batch.todo), ({}, {}))[1])
    for options, tools_ran in (({}, False), ({"tools": True}, True)):
        asked.clear()
        report = runner.ProbeReport("k.py")
        runner._probe_backend(report, ProbeRequest("k.py", options=options), "gpu", None, 2, 10.0, None)
        assert ("compute-sanitizer" in asked) is tools_ran and ("triton-debug" in asked) is tools_ran
        assert "reference" in asked
        skipped = {name: st for _, name, _, st in report.ran}
        assert tools_ran or skipped["compute-sanitizer"].startswith("skipped: opt-in: --tools"), report.ran


# ------------------------------------------------------------------ nothing checked is not ok (issue 42)

CLEAN = """import torch
import triton
import triton.language as tl


@triton.jit
def _copy(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + o, tl.load(x + o, mask=o < n), mask=o < n)


def launch(x):
    y = torch.empty_like(x)
    _copy[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), BLOCK=64)
    return y


def make_inputs(*, device, gen, n=100):
    return {"x": torch.randn(n, generator=gen).to(device)}


def reference(x):
    return x.double()
"""
UNCHECKED = {  # each a way in which no detector learns anything about the kernel
    "exits at import": ("import torch\n", "import os, torch\nos._exit(0)\n"),
    "reference returns a string": ("    return x.double()", "    return 'a string'"),
    "worker killed": ("def launch(x):\n", "def launch(x):\n    import os, signal; os.kill(os.getpid(), signal.SIGKILL)\n"),
}


@pytest.mark.parametrize("how", list(UNCHECKED))
def test_a_probe_that_checked_nothing_is_not_ok_and_exits_2(tmp_path, how, capsys):
    """``assert probe(...).ok`` passed on a probe file that exits at import (ten "the worker stopped"
    warnings), a reference that returns a string (every detector failed) and a launcher whose worker
    is killed (one P001 note); the CLI exited 0 on the last two. Now: ``ok`` is False, ``checked``
    says why, and the CLI says so in one line with exit 2."""
    old, new = UNCHECKED[how]
    path = tmp_path / "probe_it.py"
    path.write_text(CLEAN.replace(old, new, 1))
    r = probe(str(path), backends=["interpreter"], detectors=["reference", "shapes"])
    assert not r.ok and not r.checked and not r.errors, r.text()
    assert "nothing was checked" in r.text()
    capsys.readouterr()
    assert main(["probe", str(path), "--backend", "interpreter", "--only", "reference,shapes", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no detector produced a result about the kernel" in err[0], err


def test_the_same_probe_file_unbroken_is_checked_and_ok(tmp_path):
    path = tmp_path / "probe_it.py"
    path.write_text(CLEAN)
    r = probe(str(path), backends=["interpreter"], detectors=["reference", "shapes"])
    assert r.ok and r.checked, r.text()
