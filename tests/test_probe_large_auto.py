"""The run past 2**31 elements, decided by the probe from evidence about the launched kernels (issue 37 item 2):
an int32 offset that grows with a size (lint's TL501 at the launched kernels' lines) makes the large detector
plan a run for the GPU's memory, and under the interpreter alone it is a warning (P406) at the offset's line,
never an error; the twin that widens the program id to int64 stays quiet. CPU only here, except the last test
(marked gpu), which probes the same kernels at the defaults on a GPU."""

import importlib.util
from pathlib import Path

import pytest

from harness.probe import int32_offsets, probe
from harness.probe.detectors import large
from harness.probe.findings import Finding

FIXTURE = Path(__file__).parent / "probe_fixtures" / "int32" / "row_scale.py"
ROW_LINES = [i for i, line in enumerate(FIXTURE.read_text().splitlines(), 1)
             if "row * n_cols" in line and "ptr +" in line][:2]  # the int32 kernel's load and store


def _fixture(path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _kernels():
    mod = _fixture(FIXTURE, "row_scale_fixture")
    return mod.row_scale_kernel, mod.row_scale_kernel_64


def test_the_int32_row_offset_is_evidence_and_the_run_is_planned_for_the_gpus_memory():
    narrow, _ = _kernels()
    found = int32_offsets.evidence(int32_offsets.spans([narrow]))
    assert [(e["kernel"], e["line"], e["expr"], e["pointer"]) for e in found] == [
        ("row_scale_kernel", ROW_LINES[0], "row * n_cols", "x_ptr"), ("row_scale_kernel", ROW_LINES[1], "row * n_cols",
                                                                        "out_ptr")]
    # x (rows x n_cols float32) and the result (rows): rows is scaled until x passes 2**31 elements by 1%
    tensors = [{"name": "x", "numel": 64 * 1000, "itemsize": 4, "growth": {"rows": 1.0, "n_cols": 1.0}},
               {"name": "(result)", "numel": 64, "itemsize": 4, "growth": {"rows": 1.0}}]
    p = large.plan({"rows": 64, "n_cols": 1000}, tensors, free_bytes=80 << 30)
    assert p["key"] == "rows" and p["tensor"] == "x" and p["numel"] > 2 ** 31
    assert p["total_bytes"] <= 0.8 * (80 << 30)
    assert large.plan({"rows": 64, "n_cols": 1000}, tensors, free_bytes=8 << 30) is None  # does not fit: no run


def test_the_size_scaled_is_the_one_that_takes_the_addressed_tensor_past_2_31():
    # tokens x hidden activations (bf16), addressed by the int32 offset `token * stride`, and a per-expert table the
    # launcher makes (experts x hidden): doubling experts alone grows the table past 2**31 with the fewest bytes, yet
    # leaves the offset into the activations where it was; the plan must scale tokens
    sizes = {"tokens": 64, "hidden": 1024, "experts": 8}
    tensors = [{"name": "x", "numel": 64 * 1024, "itemsize": 2, "growth": {"tokens": 1.0, "hidden": 1.0}},
               {"name": "k:x_ptr", "numel": 64 * 1024, "itemsize": 2, "growth": {"tokens": 1.0, "hidden": 1.0},
                "counted": False},
               {"name": "k:table_ptr", "numel": 8 * 1024, "itemsize": 1, "growth": {"experts": 1.0, "hidden": 1.0}}]
    anyone = large.plan(sizes, tensors, free_bytes=80 << 30)
    assert anyone["key"] == "experts" and anyone["tensor"] == "k:table_ptr"  # the cheapest tensor past 2**31
    p = large.plan(sizes, tensors, free_bytes=80 << 30, targets={"k:x_ptr"})
    assert p["key"] == "tokens" and p["tensor"] == "k:x_ptr" and p["numel"] > 2 ** 31
    # the input and the kernel's argument that is the same tensor are counted once in the bytes
    assert p["total_bytes"] < 2 * p["bytes"] + (8 * 1024) + 1
    # a target that grows with no size (the evidence's pointer not seen) leaves every tensor a target, as before
    assert large.plan(sizes, tensors, free_bytes=80 << 30, targets={"k:other"}) == anyone


def test_a_run_whose_size_was_clamped_short_of_2_31_says_nothing_about_the_offset():
    import torch

    # make_inputs clamps the size scaled (topk = min(topk, experts)): the kernel's buffer stays small, and a run
    # that is right there is not a verdict on the offset (the plan is refused, the next size tried)
    p = {"tensor": "k:dst_ptr", "numel": 2 ** 31 + 4096, "bytes": 2 ** 32 + 8192}
    assert not large._reached(p, "elements", {}, {("k", "dst_ptr"): (64 * 8 * 1024, 2)}, None)
    assert large._reached(p, "elements", {}, {("k", "dst_ptr"): (2 ** 31 + 4096, 2)}, None)
    assert not large._reached(p, "bytes", {}, {("k", "dst_ptr"): (2 ** 29, 2)}, None)
    x = torch.empty(0)
    assert not large._reached({**p, "tensor": "x"}, "elements", {"x": x}, {}, None)
    assert not large._reached({**p, "tensor": "(result)"}, "elements", {}, {}, torch.empty(8))
    assert large._reached({**p, "tensor": "k:other"}, "elements", {}, {}, None)  # not seen: taken as planned


def test_large_cpu_draws_are_made_on_another_device_and_small_ones_are_left_alone():
    import torch

    from harness.run.gpu_random import drawn_on

    g = torch.Generator().manual_seed(3)
    small_before = torch.randn(10, generator=torch.Generator().manual_seed(3))
    with drawn_on("cpu", threshold=100):  # "cpu" stands for the GPU here: the draw's path is the same
        small = torch.randn(10, generator=g)
        a = torch.randn(20, 10, generator=g, dtype=torch.float16)
        b = torch.rand((20, 10), generator=g)
        c = torch.randint(0, 7, (40, 5), generator=g, dtype=torch.int32)
        d = torch.randint(7, size=(200,), generator=g)
        e = torch.randn(30, 10, generator=g, requires_grad=True)
    assert torch.equal(small, small_before)  # under the threshold: the CPU generator's own draw
    assert (a.shape, a.dtype, a.device.type) == ((20, 10), torch.float16, "cpu")
    assert b.shape == (20, 10) and 0 <= b.min() and b.max() < 1
    assert c.dtype == torch.int32 and c.shape == (40, 5) and 0 <= c.min() and c.max() < 7
    assert d.shape == (200,) and d.max() < 7 and e.requires_grad
    # seeded from the CPU generator: the same seed gives the same draws, and successive draws differ
    with drawn_on("cpu", threshold=100):
        g2 = torch.Generator().manual_seed(3)
        torch.randn(10, generator=g2)
        a2 = torch.randn(20, 10, generator=g2, dtype=torch.float16)
        a3 = torch.randn(20, 10, generator=g2, dtype=torch.float16)
    assert torch.equal(a, a2) and not torch.equal(a2, a3)
    assert torch.randn is not None and "drawn_on" not in repr(torch.randn)  # undone on leaving
    assert torch.equal(torch.randn(10, generator=torch.Generator().manual_seed(3)), small_before)


def test_the_run_keeps_make_inputs_made_wholly_on_the_gpu_only_where_each_tensor_sits_where_it_does_normally(
        monkeypatch):
    """make_inputs made under ``made_on`` (its CPU work on the GPU) is kept where every tensor it gives sits on the
    device make_inputs puts it on at the default sizes; a tensor meant for the CPU (a lengths table the launcher
    reads on the host) that lands on the GPU sends the run back to the plain draws, as does make_inputs raising
    there. The meta device stands for the GPU."""
    import contextlib

    import torch

    from harness.probe import execute as X

    state = {"on": False, "moved": False}

    @contextlib.contextmanager
    def fake_made_on(device):
        state["on"] = True
        try:
            yield
        finally:
            state["on"] = False

    def fake_make(target, sizes, seed, backend):
        gpu = torch.empty(4, device="meta")
        lens = torch.empty(2, device="meta" if state["on"] and state["moved"] else "cpu")
        return {"x": gpu, "lens": lens, "n": 4, "how": "made_on" if state["on"] else "plain"}

    class T:
        sizes = {"n": 4}

    class C:
        target, seed, backend = T(), 0, "gpu"

    monkeypatch.setattr(large, "made_on", fake_made_on)
    monkeypatch.setattr(X, "make", fake_make)
    assert large._make(C(), {"n": 2 ** 31})["how"] == "made_on"
    state["moved"] = True
    assert large._make(C(), {"n": 2 ** 31})["how"] == "plain"
    state["moved"] = False

    def raising(*a, **k):
        if state["on"]:
            raise RuntimeError("Expected a 'cuda' device type for generator")
        return fake_make(*a, **k)

    monkeypatch.setattr(X, "make", raising)
    assert large._make(C(), {"n": 2 ** 31})["how"] == "plain"


def test_a_draw_given_no_device_counts_as_a_cpu_draw_where_asked_whatever_the_default_device():
    import torch

    from harness.run.gpu_random import drawn_on

    with torch.device("meta"), drawn_on("cpu", threshold=0, keep=True, unplaced=True):
        a = torch.randn(5, generator=torch.Generator().manual_seed(1))  # made by drawn_on's "cpu" generator
    with torch.device("meta"), drawn_on("cpu", threshold=0, keep=True):
        b = torch.randn(5, device="meta")  # the default device (not the CPU): left alone
    assert a.device.type == "cpu" and b.device.type == "meta"


def test_an_autotuned_pilots_compilation_is_paid_once_and_its_benchmarking_scales(monkeypatch):
    """The pilot's first call of an autotuned kernel compiles and benchmarks each config: the seconds between
    Triton's compile hooks (``TuningCounter.compiling``) are the run's once, the rest its scaled cost."""
    import torch

    from harness.probe.budget import Budget, ManualClock
    from harness.probe.context import Context
    from harness.probe.execute import Watch
    from harness.run.triton_compat import TuningCounter, _compile_clock

    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    clock, counter, said = ManualClock(), TuningCounter(), []
    hook = _compile_clock(said.append, counter)
    monkeypatch.setattr("time.perf_counter", lambda: clock.t)
    ctx = Context(None, "gpu", 0, "large", budget=Budget(clock=clock), watch=Watch(counter=counter))

    def first_call():  # 0.3 s compiling inside a 0.5 s call
        hook("compiling")
        clock.sleep(0.3)
        hook("compiled")
        clock.sleep(0.2)

    ctx.budget.tuned(0.5)  # an autotuned kernel was tuned in this process
    once, steady = large._once_cost(ctx, first_call)
    assert (round(once, 6), round(steady, 6)) == (0.3, 0.2) and said == ["compiling", "compiled"]
    ctx.budget.longest_tuning = 0.0  # not autotuned: the second call's seconds are the steady cost
    once, steady = large._once_cost(ctx, lambda: clock.sleep(0.1))
    assert (round(once, 6), round(steady, 6)) == (0.0, 0.1)


def test_the_twin_that_widens_the_program_id_has_no_evidence():
    _, wide = _kernels()
    assert int32_offsets.evidence(int32_offsets.spans([wide])) == []


def test_only_the_launched_kernels_lines_count(tmp_path):
    """Another kernel of the same file with the int32 product is not evidence when it was not launched."""
    narrow, wide = _kernels()
    assert int32_offsets.evidence(int32_offsets.spans([wide])) == []
    both = int32_offsets.evidence(int32_offsets.spans([narrow, wide]))
    assert {e["kernel"] for e in both} == {"row_scale_kernel"}


def test_under_the_interpreter_alone_the_evidence_is_a_note_at_the_offsets_line():
    r = probe(str(FIXTURE), backends=["interpreter"], detectors=["reference", "large"])
    (f,) = r.by_code("P406")
    assert f.severity == "info" and r.ok and not r.errors and not r.warnings, r.text()  # a hazard, not shown
    assert f.line.split(", ")[0].endswith(f"row_scale.py:{ROW_LINES[0]}"), f.line
    assert f.message.startswith("int32 offset grows with rows; wraps once the tensor at x_ptr passes 2**31 elements")
    assert f.cases[0]["slug"] == "int32-offset-overflow"  # the lesson: the casebook's int32 overflow case
    assert not r.diagnosis  # a note is no defect to diagnose: nothing was shown wrong
    fixed = probe(str(FIXTURE), launcher="launch_fixed", backends=["interpreter"], detectors=["reference", "large"])
    assert not fixed.problems, fixed.text()
    assert any(d == "large" and s.startswith("skipped: no int32 offset") for _, d, _, s in fixed.ran), fixed.ran


PERMUTE = Path(__file__).parent / "probe_fixtures" / "int32" / "permute_rows.py"


def _permute_kernels():
    mod = _fixture(PERMUTE, "permute_rows_fixture")
    return mod.permute_rows_kernel, mod.permute_rows_kernel_64


def test_an_index_loaded_from_a_32_bit_tensor_times_a_size_is_evidence_where_the_launch_shows_its_width():
    """``dst = tl.load(dst_ptr + row)`` with ``row`` widened: the address is int64 but the value is the index
    map's, int32, so ``dst * hidden`` wraps. Lint cannot see the map's dtype (no evidence without it); the probe
    knows the launch's tensors (4-byte elements at dst_ptr), and an int64 map (8 bytes) is none."""
    narrow, wide = _permute_kernels()
    assert int32_offsets.evidence(int32_offsets.spans([narrow])) == []
    (e,) = int32_offsets.evidence(int32_offsets.spans([narrow]), narrow={"permute_rows_kernel": {"dst_ptr"}})
    assert (e["expr"], e["pointer"]) == ("dst * hidden", "out_ptr"), e
    assert int32_offsets.evidence(int32_offsets.spans([narrow]), narrow={"permute_rows_kernel": {"x_ptr"}}) == []
    assert int32_offsets.evidence(int32_offsets.spans([wide]), narrow={"permute_rows_kernel_64": {"dst_ptr"}}) == []


def test_under_the_interpreter_the_loaded_index_offset_is_a_note_and_its_widened_twin_is_quiet():
    r = probe(str(PERMUTE), backends=["interpreter"], detectors=["reference", "large"])
    (f,) = r.by_code("P406")
    assert f.message.startswith("int32 offset grows with tokens; wraps once the tensor at out_ptr"), f.message
    assert f.severity == "info" and r.ok, r.text()
    fixed = probe(str(PERMUTE), launcher="launch_fixed", backends=["interpreter"], detectors=["reference", "large"])
    assert not fixed.problems and not fixed.by_code("P406"), fixed.text()
    assert any(d == "large" and s.startswith("skipped: no int32 offset") for _, d, _, s in fixed.ran), fixed.ran


def test_a_run_whose_reference_does_not_fit_the_slice_is_made_without_it():
    """The pilot's reference time is told apart from the launch's: a float64 reference over the whole problem on
    the CPU (14 s for a 2**31-element permutation on an H200's host) must not stop a launch of 1 s that can show
    the wrap as an illegal address; a launch that does not fit is not made."""
    from harness.probe.detectors.large import fits

    assert fits(0.9, 0.85, 16, 10.0) == (pytest.approx(0.8), False)  # the launch fits, its reference does not
    assert fits(0.9, 0.1, 10, 10.0) == (pytest.approx(8.0), True)  # both fit
    assert fits(0.9, 0.0, 16, 10.0) == (None, False)  # the launch itself does not


def test_the_pilots_compilation_is_paid_once_not_scaled_with_the_run(monkeypatch):
    """te-permute on the H200 board of 030ab1e: a pilot of 0.7 s at 1/16 of the tensors, most of it compiling the
    launch's new specialization, said the run would take 11 s, more than the 5 s left, and the run was not made
    (at d1cf2a0 the same run took 5.1 s in all). The first pilot call's seconds that a second call at the same
    sizes does not take again are paid once; only the rest scales. An autotuned kernel benchmarks its configs at
    the run's own sizes: its first call scales whole, as before."""
    from types import SimpleNamespace

    from harness.probe.budget import Budget, ManualClock
    from harness.probe.detectors import large

    assert large.fits(0.2, 0.0, 16, 5.0, once=0.5) == (pytest.approx(3.7), True)  # fits with compiling paid once
    assert large.fits(0.7, 0.0, 16, 5.0) == (None, False)  # the whole pilot scaled: it did not
    clock = ManualClock()
    calls = []

    def call():  # the first call compiles (0.5 s), each call runs 0.02 s
        calls.append(1)
        clock.sleep(0.52 if len(calls) == 1 else 0.02)

    import torch

    ctx = SimpleNamespace(budget=Budget(clock=clock))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    assert large._once_cost(ctx, call) == (pytest.approx(0.5), pytest.approx(0.02)) and len(calls) == 2
    ctx.budget.tuned(3.0)  # autotuned here: one call, scaled whole
    calls.clear()
    assert large._once_cost(ctx, call) == (0.0, pytest.approx(0.52)) and len(calls) == 1


def test_the_hazard_is_said_once_and_not_where_the_gpus_run_gave_a_verdict():
    from harness.probe.runner import one_int32_hazard

    gpu = Finding("P406", "large", "gpu", "int32 offset grows with rows", severity="warning")
    cpu = Finding("P406", "large", "interpreter", "int32 offset grows with rows", severity="warning")
    other = Finding("P401", "shapes", "interpreter", "wrong at n=3")
    assert one_int32_hazard([cpu, other, gpu], {}) == [other, gpu]
    again = Finding("P406", "large", "gpu", "int32 offset grows with rows", severity="warning")  # said twice
    assert one_int32_hazard([gpu, again, other], {}) == [gpu, other]
    assert one_int32_hazard([cpu, other], {"interpreter": {}}) == [cpu, other]
    judged = {"gpu": {"seen": {"large_verdict": "right"}}}
    assert one_int32_hazard([cpu, other, gpu], judged) == [other]


def test_asked_for_with_large_it_keeps_its_own_time_and_decided_on_it_keeps_the_budget():
    from harness.probe.detectors import registry

    d = registry()["large"]
    assert d.keeps_budget({}) and not d.keeps_budget({"large": True})


def _gpu_probe(launcher):
    """The probe of the fixture's ``launcher`` on the GPU at the defaults, with the budget of 60 s rather than the
    GPU's default 20 s so that a loaded test machine (the GPU suite's other work runs beside it) does not leave
    the run out of its slice (the default's own timing is measured by benchmarks/auto_large_gpu.py)."""
    return probe(str(FIXTURE), launcher=launcher, backends=["gpu"], budget=60)


def _gpu_permute_probe(launcher):
    """As ``_gpu_probe``, for the index-map fixture."""
    return probe(str(PERMUTE), launcher=launcher, backends=["gpu"], budget=60)


def gpu_ahead(items, start):
    """With a GPU, both probes (the int32 kernel's and its twin's) start at collection, beside the suite's
    other GPU work (run after the case batch, they added 9 s to the GPU suite on an H200, issue 40)."""
    if any(item.name.startswith("test_on_a_gpu_at_the_defaults") for item in items):
        for launcher in ("launch", "launch_fixed"):
            start(("large-auto", launcher), _gpu_probe, launcher)
    if any(item.name.startswith("test_on_a_gpu_an_index_map") for item in items):
        for launcher in ("launch", "launch_fixed"):
            start(("large-permute", launcher), _gpu_permute_probe, launcher)
    if any(item.name.startswith("test_on_a_gpu_a_paged_cache") for item in items):
        for name in MORE:
            for launcher in ("launch", "launch_fixed"):
                start((f"large-{name}", launcher), _gpu_more_probe, name, launcher)


MORE = ("paged_sum", "expert_gate")  # a page index from an int32 block table; program ids over experts' buffers


def _gpu_more_probe(name, launcher):
    """As ``_gpu_probe``, for one of the fixtures ``MORE`` names."""
    path = Path(__file__).parent / "probe_fixtures" / "int32" / f"{name}.py"
    return probe(str(path), launcher=launcher, backends=["gpu"], budget=60)


@pytest.mark.gpu
@pytest.mark.parametrize("name", MORE)
def test_on_a_gpu_a_paged_cache_and_an_experts_batch_are_caught_past_2_31(ahead, name):
    """A page offset ``page * page_stride`` with ``page`` read from an int32 block table (the pool passes 2**31
    elements, the output stays small), and ``e * stride_e + t * stride_t`` over experts' buffers: the run past
    2**31 elements shows each wrap; the twins that widen are quiet."""
    r = ahead((f"large-{name}", "launch"), _gpu_more_probe, name, "launch")
    assert [f.severity for f in r.by_code("P404")] == ["error"], r.text()
    fixed = ahead((f"large-{name}", "launch_fixed"), _gpu_more_probe, name, "launch_fixed")
    assert fixed.ok and not fixed.by_code("P404") and not fixed.by_code("P406"), fixed.text()


@pytest.mark.gpu
def test_on_a_gpu_an_index_maps_int32_destination_row_is_caught_by_the_run_past_2_31(ahead):
    """The evidence from the launch's 32-bit index map buys the run; the run shows the wrap (a crash or wrong
    rows past 2**31 elements of out); the twin that widens the loaded index is quiet."""
    r = ahead(("large-permute", "launch"), _gpu_permute_probe, "launch")
    assert [f.severity for f in r.by_code("P404")] == ["error"], r.text()
    fixed = ahead(("large-permute", "launch_fixed"), _gpu_permute_probe, "launch_fixed")
    assert fixed.ok and not fixed.by_code("P404") and not fixed.by_code("P406"), fixed.text()


@pytest.mark.gpu
def test_on_a_gpu_at_the_defaults_the_int32_row_offset_is_caught_by_the_run_past_2_31(ahead):
    """No --large: the probe decides on the run from the kernel's int32 offset."""
    r = ahead(("large-auto", "launch"), _gpu_probe, "launch")
    assert [f.severity for f in r.by_code("P404")] == ["error"], r.text()
    assert not r.by_code("P406"), r.text()  # shown wrong: the hazard is an error now
    fixed = ahead(("large-auto", "launch_fixed"), _gpu_probe, "launch_fixed")
    # (the layout detector's P206 warnings on both: the kernels take the rows as contiguous, n_cols their stride)
    assert fixed.ok and not fixed.by_code("P406") and not fixed.by_code("P404"), fixed.text()
    assert any(d == "large" and s.startswith("skipped: no int32 offset") for _, d, _, s in fixed.ran), fixed.ran


SIMULATED_GPU = r'''
import json, torch
from harness.probe import execute
from harness.probe.budget import Budget, ManualClock
from harness.probe.context import Context
from harness.probe.detectors import large
from harness.probe.target import load
from harness.run.triton_compat import patched

execute.device_of = lambda backend: "cpu"  # the GPU's side of the detector, its tensors on the CPU
torch.cuda.is_available = lambda: True
torch.cuda.empty_cache = lambda: None
torch.cuda.synchronize = lambda: None
out = {}
with patched(interpreter=True):
    target = load(FILE, None, "launch", "interpreter", None)
    for name, free, left in (("no-room", 1 << 30, 60.0), ("no-time", 80 << 30, 0.0)):
        torch.cuda.mem_get_info = lambda free=free: (free, free)
        clock = ManualClock()
        budget = Budget(20.0, ends=clock.t + left, stop=clock.t + left, clock=clock)
        budget.begin(120.0)
        ctx = Context(target, "gpu", 0, "large", options={"budget": 20.0}, budget=budget)
        skipped = large._skip(ctx)
        found = large.large(ctx)
        out[name] = {"skip": skipped, "found": [[f.code, f.severity, f.message] for f in found],
                     "verdict": ctx.board.large_verdict}
print("RESULT " + json.dumps(out))
'''


def test_on_a_gpu_the_evidence_stands_as_a_note_where_the_run_cannot_be_made():
    """The GPU's side, its tensors on the CPU: with 1 GiB free no size fits (a note, and the hazard's note); with the
    memory and no time left in the budget, the run is not made (a note saying so, and the hazard's note): never a
    silent skip, never an error."""
    from tests.test_triton_compat import run_interpreted

    got = run_interpreted(f"FILE = {str(FIXTURE)!r}\n" + SIMULATED_GPU)
    for name in ("no-room", "no-time"):
        r = got[name]
        assert r["skip"] is None and r["verdict"] is None, r
        assert [(c, s) for c, s, _ in r["found"]][0] == ("P406", "info"), r
        assert all(s != "error" for _, s, _ in r["found"]), r
    assert [c for c, _, _ in got["no-room"]["found"]] == ["P406", "P404"]
    assert "no size scales a tensor past 2**31" in got["no-room"]["found"][1][2]
    (note,) = [m for c, _, m in got["no-time"]["found"] if c == "P000"]
    assert note.startswith("the run past 2**31 elements was not made: the probe's budget had no time left"), note


def test_an_offset_into_a_pointer_that_was_none_at_the_launch_is_no_evidence():
    """An optional scale's offset in a branch a constexpr turns off: its pointer was None at the launch (not among
    the tensors the launch was given), so it cannot wrap; the largest tensor's offset comes first."""
    found = [{"kernel": "k", "pointer": "scale_ptr", "line": 5}, {"kernel": "k", "pointer": "x_ptr", "line": 7},
             {"kernel": "k", "pointer": "out_ptr", "line": 9}, {"kernel": "k", "pointer": "", "line": 11}]
    numels = {("k", "x_ptr"): 10, ("k", "out_ptr"): 40}
    assert [e["line"] for e in int32_offsets.addressed(found, numels)] == [9, 7, 11]
    assert int32_offsets.addressed(found, {}) == found  # the launch not seen: every offset stays


def test_running_out_of_gpu_memory_is_the_machines_limit_not_the_kernels_fault():
    """Two probes on one GPU each plan for the memory free at their start: the allocation that fails is no P404
    error (a fixed kernel would be flagged for the machine's load)."""
    import torch

    assert large.out_of_memory(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 GiB"))
    assert large.out_of_memory(RuntimeError("Triton Error [CUDA]: out of memory"))
    assert not large.out_of_memory(RuntimeError("CUDA error: an illegal memory access was encountered"))


def test_its_own_long_run_killed_at_the_budgets_end_is_a_note_not_a_warning():
    """A launcher call past 2**31 elements still going at the budget's end is the run's length (its timeout
    severity: information), where another detector's long call there is a warning (a hang or a slow kernel)."""
    from types import SimpleNamespace

    from harness.probe import runner

    proc = SimpleNamespace(cut=None, stopped=0, hung=True, silent=12.0, returncode=-9)
    ev = runner.ProbeEvents()
    assert runner._ended("large", "gpu", proc, ev, 120.0, 20.0).severity == "info"
    assert runner._ended("shapes", "gpu", proc, ev, 120.0, 20.0).severity == "warning"


def test_a_process_that_dies_in_the_run_past_2_31_is_that_runs_finding():
    """The large detector's run past 2**31 elements is what a crash there shows (an int32 offset wrapped into an
    illegal address that took the worker down): P404 with the error the worker said last, not the generic P001 a
    crash in another detector is."""
    import types

    from harness.probe import runner

    proc = types.SimpleNamespace(cut="", stopped=0.0, hung=False, silent=0.0, returncode=3)
    ev = types.SimpleNamespace(trying={"rows": 2168960}, errors={"": "AcceleratorError: CUDA error: an illegal memory "
                                                                    "access was encountered"})
    f = runner._ended("large", "gpu", proc, ev, timeout=60.0, budget=20.0)
    assert (f.code, f.severity, f.detector) == ("P404", "error", "large"), f
    assert "rows=2168960" in f.message and "illegal memory access" in f.message, f.message
    other = runner._ended("shapes", "gpu", proc, types.SimpleNamespace(trying={}, errors={}), timeout=60.0)
    assert other.code == "P001" and other.message.endswith("exit status 3"), other


def test_the_time_held_for_the_run_is_what_its_pilot_says_it_needs(monkeypatch):
    """The detectors before the run past 2**31 elements leave it what its pilot, made as soon as the defaults'
    launch was seen, says the run needs (over LARGE_SHARE, plus a margin), up to LARGE_HOLD_MAX_S; nothing where
    the run is predicted past that (it will not be made: the others keep the time; a fixed 6 s was held for a run
    predicted at 37 s on the H200 board of 030ab1e) or no size fits the GPU; LARGE_HOLD_S where the pilot cannot
    tell. The run then decides from the same pilot: no second one."""
    from types import SimpleNamespace

    import torch

    from harness.probe.blackboard import Blackboard
    from harness.probe.budget import (LARGE_HOLD_MARGIN_S, LARGE_HOLD_MAX_S, LARGE_HOLD_S, LARGE_SHARE, Budget,
                                      ManualClock)
    from harness.probe.detectors import large

    plan = {"key": "n", "sizes": {"n": 2 ** 31 + 2 ** 24}, "tensor": "x", "numel": 2 ** 31 + 2 ** 24}
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda: (100 * 2 ** 30, 141 * 2 ** 30), raising=False)
    monkeypatch.setattr(large, "profile", lambda ctx: [])
    monkeypatch.setattr(large, "plans", lambda *a, **k: [plan])
    piloted = []

    def ctx_with(got):
        monkeypatch.setattr(large, "_pilot", lambda ctx, p: piloted.append(p) or got)
        return SimpleNamespace(board=Blackboard(), budget=Budget(20.0, ends=17.0, clock=ManualClock()),
                               target=SimpleNamespace(sizes={"n": 1024}))

    needs = {"took": 0.3, "ref_took": 0.0, "once": 0.5, "scale": 16.0, "small": 2 ** 27}
    expect = (0.3 * 16 + 0.5) / LARGE_SHARE + LARGE_HOLD_MARGIN_S
    assert expect < LARGE_HOLD_MAX_S["gpu"]
    assert large._hold_for(ctx_with(needs)) == pytest.approx(expect)
    assert large._hold_for(ctx_with({**needs, "took": 2.3})) == 0.0  # 37 s: not made, nothing held
    assert large._hold_for(ctx_with(None)) == LARGE_HOLD_S["gpu"]  # the pilot could not tell
    monkeypatch.setattr(large, "plans", lambda *a, **k: [])
    assert large._hold_for(ctx_with(needs)) == 0.0  # no size fits the GPU's memory
    # the run's decision reuses the pilot kept on the board
    monkeypatch.undo()
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None, raising=False)
    ctx = SimpleNamespace(board=Blackboard(), budget=Budget(20.0, ends=17.0, clock=ManualClock()),
                          target=SimpleNamespace(sizes={"n": 1024}), late=lambda: False)
    ctx.wrap_up_by = lambda: ctx.budget.now() + 8.0
    ctx.board.large_pilot = {"plan": sorted(plan["sizes"].items()), "got": needs}
    monkeypatch.setattr(large, "_make", lambda *a: pytest.fail("a second pilot was made"))
    assert large._too_long(ctx, plan, "elements") == ("", True)
    ctx.wrap_up_by = lambda: ctx.budget.now() + 3.0
    why, _ = large._too_long(ctx, plan, "elements")
    assert "would take about 5s" in why and "0.5s more once (compiling)" in why, why
