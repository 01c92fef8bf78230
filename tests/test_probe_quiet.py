"""The probe quiet on correct kernels, and fast (issue #20, items 1 and 5): each general rule
that keeps a correct kernel from being flagged, or cuts time without losing a catch, with a
kernel that shows it and, where there is one, the broken kernel that must still be caught.

- memcheck: a pointer chosen by ``tl.where`` between two tensors is checked against the one
  chosen (``interp_instrument.derived_tag``);
- shape fuzzing: a launcher's scratch buffer left partly unwritten while the result is right is
  no failure (the guards detector's information); an unwritten result still is;
- the order detector is skipped where the race detector saw no program touch what another
  writes, and runs where one does; its larger sizes run only when they fit its deadline;
- the interpreter patches ``triton.language`` once per function per launch, not per call;
- autotune under the probe benchmarks each config in two calls;
- the real-bug board: a finding recorded in the entry's ``[[fixed_known]]`` is a true finding
  on the fixed version, only when it is the one made; stub modules have a spec.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

from harness import probe

ROOT = Path(__file__).resolve().parents[1]

HEAD = """\
import torch
import triton
import triton.language as tl
"""


def _file(tmp_path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(HEAD + textwrap.dedent(body))
    return str(path)


# program 0 reads a, program 1 reads b: the pointer is tl.where(pid == 0, a + ..., b + ...). The
# branch not taken points far outside its tensor (b - BLOCK for program 0); only the one taken is read.
SELECT = """
@triton.jit
def pick(a_ptr, b_ptr, out_ptr, n, SHIFT, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    base = tl.where(pid == 0, a_ptr + pid * BLOCK, b_ptr + (pid - 1) * BLOCK + SHIFT)
    x = tl.load(base + offs, mask=offs < n)
    tl.store(out_ptr + pid * BLOCK + offs, x, mask=offs < n)

def launch(a, b, shift):
    n = a.numel()
    out = torch.empty(2 * 16, dtype=a.dtype)
    pick[(2,)](a, b, out, n, shift, BLOCK=16)
    return torch.cat([out[:n], out[16:16 + n]])

def make_inputs(*, device, gen, n=16, shift=0):
    return {"a": torch.randn(n, generator=gen), "b": torch.randn(n, generator=gen), "shift": shift}

def reference(a, b, shift):
    return torch.cat([a, b[shift:], b.new_zeros(shift)]).double()
"""


def test_a_pointer_chosen_by_tl_where_is_checked_against_the_tensor_it_points_into(tmp_path):
    path = _file(tmp_path, "select.py", SELECT)
    r = probe(path, detectors=["memcheck"])
    assert r.ok and not r.by_code("P102"), r.text()
    # the pointer taken runs past the end of b: found, and named b (not a, the first operand)
    bad = probe(path, detectors=["memcheck"], sizes={"shift": 5})
    loads = bad.by_code("P102")
    assert loads and "past the end of 'b_ptr'" in loads[0].message and loads[0].programs == ["1"], bad.text()


def test_derived_tag_follows_the_condition_of_a_select():
    import numpy as np
    from triton.runtime.interpreter import TensorHandle

    from harness.run.interp_instrument import TAG, derived_tag

    class H(TensorHandle):
        def __init__(self, data, tag=None):
            self.data, self.attr = np.asarray(data), ({TAG: tag} if tag else {})

    a, b = H([1, 2], "a"), H([3, 4], "b")
    assert derived_tag("create_select", (H([True, True]), a, b), H) == "a"
    assert derived_tag("create_select", (H([False, False]), a, b), H) == "b"
    assert derived_tag("create_select", (H([True, False]), a, b), H) is None  # lanes in two tensors
    assert derived_tag("create_select", (H([True, False]), a, H([5, 6], "a")), H) == "a"
    assert derived_tag("create_addptr", (a, H([0, 1])), H) == "a"


SCRATCH = """
@triton.jit
def copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def launch(x):
    n = x.numel()
    buf = torch.empty(n + 8)           # scratch: the kernel fills the first n, the result is those
    copy[(triton.cdiv(n, 64),)](x, buf, n, BLOCK=64)
    return buf[:n].clone()

def launch_broken(x):
    n = x.numel()
    out = torch.empty(n)               # the result itself: its tail never written past 64
    copy[(1,)](x, out, min(n, 64), BLOCK=64)
    return out

def make_inputs(*, device, gen, n=64):
    return {"x": torch.randn(n, generator=gen)}

def reference(x):
    return x.double()

FUZZ = {"n": (1, 200)}
"""


def test_shape_fuzzing_takes_an_unwritten_scratch_buffer_with_a_right_result_as_no_failure(tmp_path):
    path = _file(tmp_path, "scratch.py", SCRATCH)
    r = probe(path, detectors=["guards", "shapes"], options={"fuzz_trials": 8})
    assert r.ok and not r.by_code("P401"), r.text()
    assert [f.severity for f in r.by_code("P113")] == ["info"], r.text()  # the guards detector says so
    broken = probe(path, launcher="launch_broken", detectors=["reference", "shapes"], options={"fuzz_trials": 8})
    assert any("never written" in f.message for f in broken.by_code("P401")), broken.text()


def _status(report, name):
    return next(st for _b, d, _s, st in report.ran if d == name)


def test_order_is_skipped_where_no_program_touches_what_another_writes(tmp_path):
    path = _file(tmp_path, "scratch.py", SCRATCH)
    r = probe(path, detectors=["race", "order"], jobs=1)
    assert _status(r, "order").startswith("skipped: no program writes an address"), r.ran
    # every program stores to out[0] (nrm2-race): the race detector sees it, order runs
    case = ROOT / "cases" / "nrm2-race"
    shared = probe(str(case / "broken.py"), inputs=str(case / "case.py"), launcher="nrm2",
                   detectors=["race", "order"], sizes={"n": 3001}, jobs=1, budget=0)
    assert _status(shared, "order") == "done", shared.ran
    # order alone (no race record) runs, as before
    alone = probe(path, detectors=["order"], budget=0)  # (no budget: the status must not depend on speed)
    assert _status(alone, "order") == "done", alone.ran


def test_order_runs_a_larger_size_only_when_it_fits_the_deadline():
    from harness.probe.budget import Budget, DetectorTimeout, ManualClock
    from harness.probe.context import Context
    from harness.probe.detectors.order import fits

    clock = ManualClock()
    ctx = Context(target=None, backend="interpreter", seed=0, name="order", budget=Budget(clock=clock))
    assert fits(ctx, 1e9)  # no deadline
    ctx.budget.deadline = clock.t + 10
    assert fits(ctx, 1.0) and not fits(ctx, 60.0)
    # a run past the deadline is stopped there, quietly, and the worker's own timer (a hang) goes on
    with ctx.budget.limit(30, DetectorTimeout):
        ctx.budget.deadline = clock.t + 0.3
        t0 = clock.t
        with ctx.budget.until_deadline():
            for _ in range(500):
                clock.sleep(0.01)
        assert 0.3 <= clock.t - t0 < 0.31
        assert ctx.budget.timer.earliest() == t0 + 30 and clock.due == t0 + 30
        ctx.budget.deadline = clock.t + 100  # a budget of its own, shorter than the deadline
        t0 = clock.t
        with ctx.budget.until_deadline(0.3):
            for _ in range(500):
                clock.sleep(0.01)
        assert 0.3 <= clock.t - t0 < 0.31 and ctx.budget.timer.earliest() is not None


NESTED = """
@triton.jit
def twice(x):
    return x * 2

@triton.jit
def loop(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    for _ in range(8):
        x = twice(x) * 0.5
    tl.store(out_ptr + offs, twice(x), mask=offs < n)
"""


def test_the_interpreter_patches_the_language_once_per_function_per_launch(tmp_path, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    path = tmp_path / "nested_kernel.py"
    path.write_text(HEAD + textwrap.dedent(NESTED))
    spec = importlib.util.spec_from_file_location("nested_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import torch
    from triton.runtime import interpreter

    from harness.run.interp_instrument import instrumented

    calls = []
    plain = interpreter._patch_lang
    monkeypatch.setattr(interpreter, "_patch_lang", lambda fn, *a, **k: (calls.append(fn), plain(fn, *a, **k))[1])
    x = torch.randn(100)
    out = torch.empty(100)
    with instrumented():
        mod.loop[(4,)](x, out, 100, BLOCK=32)
    assert torch.allclose(out, x * 2), (out - x * 2).abs().max()
    # the launch's own patch and the helper's first call, not one per call (4 programs x 9 calls)
    assert len(calls) == 2, len(calls)
    assert interpreter._patch_lang.__name__ == "<lambda>"  # put back after the launch


def test_autotune_under_the_probe_benchmarks_each_config_in_two_calls():
    from harness.probe import worker
    from harness.run import triton_compat

    calls = []
    assert worker.BENCH_CALLS == 2
    out = triton_compat.do_bench_cpu(lambda: calls.append(1), quantiles=(0.5, 0.2, 0.8), calls=worker.BENCH_CALLS)
    assert len(calls) == 2 and len(out) == 3
    calls.clear()
    triton_compat.do_bench_cpu(lambda: calls.append(1))
    assert len(calls) > 2  # do_bench's own algorithm elsewhere


def test_autotune_under_the_probe_on_the_gpu_benchmarks_each_config_in_two_calls():
    """On the GPU the probe's autotune times each config in two launches too (not 125 ms of them);
    outside the probe, Triton's own benchmarker stays."""
    import triton
    import triton.language as tl

    from harness.probe import worker
    from harness.run import triton_compat

    @triton.jit
    def k(x):
        tl.store(x, 1)

    from triton.runtime.autotuner import Autotuner

    tuned = triton.autotune(configs=[triton.Config({}, num_warps=1)], key=[])(k)
    before = Autotuner.__dict__["do_bench"]
    with triton_compat.patched(interpreter=False, bench_calls=worker.BENCH_CALLS):
        bench = tuned.do_bench.__wrapped__  # timed for the tuning cost (TuningCounter.seconds)
        assert bench.func is triton_compat.do_bench_gpu_calls and bench.keywords == {"calls": 2}
    assert Autotuner.__dict__["do_bench"] is before


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="needs a CUDA GPU")
def test_the_gpu_benchmark_in_two_calls_times_one():
    from harness.run import triton_compat

    calls = []
    out = triton_compat.do_bench_gpu_calls(lambda: calls.append(1), quantiles=(0.5, 0.2, 0.8), calls=2)
    assert len(calls) == 2 and len(out) == 3 and all(t >= 0 for t in out)


def test_a_stub_module_has_a_spec_so_find_spec_works_on_it():
    from harness.bugs import source

    name = "casebook_stub_never_installed"
    try:
        source._stub(f"{name}.sub", {"x": 1})
        assert importlib.util.find_spec(name) is not None  # raised ValueError (__spec__ is None) before
        assert sys.modules[f"{name}.sub"].x == 1
    finally:
        for k in [k for k in sys.modules if k.startswith(name)]:
            del sys.modules[k]


# ---- the board: [[fixed_known]]

KNOWN = """
[[fixed_known]]
code = "P401"
detector = "shapes"
match = "wrote outside"
sizes = { n = 1 }
why = "absmax stored unmasked"
"""


def _manifest(tmp_path, extra: str):
    from tests.test_bugs import RELEASED, _entry

    from harness.bugs import manifest

    return manifest.read(_entry(tmp_path, RELEASED + extra))


def _row(*findings):
    errors = [{"code": c, "detector": d, "message": m} for c, d, m in findings]
    return {"caught": bool(errors), "errors": len(errors), "warnings": 0, "error_findings": errors,
            "first": errors[0] if errors else None, "codes": sorted({e["code"] for e in errors}),
            "diagnosis": [], "diagnosis_first_right": False, "diagnosis_top3_right": False, "seconds": 1.0}


def test_a_recorded_true_finding_on_the_fixed_version_is_not_a_false_alarm(tmp_path):
    from harness.bugs import board

    e = _manifest(tmp_path, KNOWN)
    assert e.fixed_known[0]["code"] == "P401" and e.fixed_known[0]["backends"] == ["interpreter", "gpu"]
    made = _row(("P401", "shapes", "wrote outside: smallest failing sizes n=1"))
    assert board.known_on_fixed(e, made, "interpreter") == "P401: absmax stored unmasked"
    # another finding as well, or another one instead, or a finding of another detector: a false alarm
    assert board.known_on_fixed(e, _row(("P401", "shapes", "wrote outside"), ("P201", "reference", "x")),
                                "interpreter") is None
    assert board.known_on_fixed(e, _row(("P401", "shapes", "wrong values: ...")), "interpreter") is None
    assert board.known_on_fixed(e, _row(("P401", "memcheck", "wrote outside")), "interpreter") is None
    assert board.known_on_fixed(e, _row(), "interpreter") is None  # quiet: nothing to explain

    def line(fixed):
        return {"slug": "demo-entry", "visible": True, "defect": e.defect, "verified": True,
                "buggy": {"probe": _row(("P201", "reference", "x"))}, "fixed": {"probe": fixed},
                "fixed_known": board.known_on_fixed(e, fixed, "interpreter")}
    lines = [line(made), line(_row(("P401", "shapes", "never written"))), line(_row())]
    t = board.totals(lines, peers=())
    assert (t["false_alarms"], t["fixed_true_findings"]) == (1, 1)
    from harness.bugs import record

    md = record.scoreboard_md(lines, t, "interpreter", [], ())
    assert "| true findings on fixed versions (bug.toml [[fixed_known]]) | 1 of 3 |" in md
    assert "**true finding** P401" in md


def test_a_buggy_version_flagged_only_by_the_fixed_versions_recorded_finding_is_not_caught(tmp_path):
    """The finding both versions share (another defect the fix left) is not this bug."""
    from harness.bugs import board, record

    e = _manifest(tmp_path, KNOWN)
    shared = _row(("P401", "shapes", "wrote outside: smallest failing sizes n=1"))

    def line(buggy):
        return {"slug": "demo-entry", "visible": True, "defect": e.defect, "verified": True,
                "buggy": {"probe": buggy}, "fixed": {"probe": shared},
                "fixed_known": board.known_on_fixed(e, shared, "interpreter"),
                "buggy_known_only": board.known_on_fixed(e, buggy, "interpreter")}
    only_shared, own = line(shared), line(_row(("P401", "shapes", "wrote outside"), ("P201", "reference", "x")))
    assert not board.caught(only_shared) and board.caught(own)
    t = board.totals([only_shared, own], peers=())
    assert (t["caught_visible"], t["caught_all"], t["false_alarms"]) == (1, 1, 0)
    assert "not this bug" in record.scoreboard_md([only_shared, own], t, "interpreter", [], ())


def test_a_diagnosis_resting_on_the_fixed_versions_recorded_defect_is_scored_past(tmp_path):
    """The buggy version has two defects: the entry's, and one the fixed version shares
    ([[fixed_known]]). Naming the shared one first is right about it; the diagnosis scored is
    the first one after it. A diagnosis with any evidence of its own is not set aside."""
    from harness.bugs import board, record

    e = _manifest(tmp_path, KNOWN)  # known: P401 shapes "wrote outside"
    e.defect = "unwritten-output"
    buggy = _row(("P401", "shapes", "wrote outside: n=1"), ("P401", "shapes", "never written: n=1023"))
    buggy["diagnosis"] = ["out-of-bounds-write", "unwritten-output"]
    buggy["diagnosis_evidence"] = [["oob-store: shapes: wrote outside: smallest failing sizes n=1",
                                    "oob-store: interpreter: at n=1: k: store past the end of 'absmax_ptr'"],
                                   ["oob-store: shapes: wrote outside: smallest failing sizes n=1",
                                    "unwritten: shapes: never written: smallest failing sizes n=1023"]]
    board.rescore_diagnosis(e, buggy, "interpreter")
    assert buggy["diagnosis_scored"] == ["unwritten-output"] and buggy["diagnosis_first_right"]
    line = {"slug": "demo-entry", "visible": True, "defect": e.defect, "verified": True,
            "buggy": {"probe": buggy}, "fixed": {"probe": _row()}}
    assert "(out-of-bounds-write: the fixed version's defect too), unwritten-output" in record._entry_row(line, ())
    own = _row(("P401", "shapes", "wrote outside: n=1"))
    own["diagnosis"] = ["out-of-bounds-write"]  # a store out of bounds seen by memcheck too: its own evidence
    own["diagnosis_evidence"] = [["oob-store: shapes: wrote outside: n=1", "oob-store: memcheck: store past 'out'"]]
    board.rescore_diagnosis(e, own, "interpreter")
    assert own["diagnosis_scored"] == ["out-of-bounds-write"] and not own["diagnosis_first_right"]
    facts = _row(("P401", "shapes", "wrote outside: n=1"))
    facts["diagnosis"] = ["autotune-accumulation"]  # beside the shared store: the source's unreset atomics
    facts["diagnosis_evidence"] = [["autotuned-atomics: interpreter: k: autotuned, with atomics, and no reset_to_zero",
                                    "oob-store: shapes: wrote outside: n=1"]]
    board.rescore_diagnosis(e, facts, "interpreter")
    assert facts["diagnosis_scored"] == ["autotune-accumulation"]
    old = _row(("P401", "shapes", "wrote outside: n=1"))
    old["diagnosis"] = ["out-of-bounds-write"]  # recorded before evidence was kept: unchanged
    board.rescore_diagnosis(e, old, "interpreter")
    assert "diagnosis_scored" not in old and not old["diagnosis_first_right"]


@pytest.mark.parametrize("extra, says", [
    ('[[fixed_known]]\ncode = "401"\nwhy = "w"\n', "code must be a finding code"),
    ('[[fixed_known]]\ncode = "P401"\n', "why must say"),
    ('[[fixed_known]]\ncode = "P401"\nwhy = "w"\nbackends = ["tpu"]\n', "backend 'tpu'"),
])
def test_a_bad_fixed_known_table_is_one_line(tmp_path, extra, says):
    from harness.bugs import manifest

    with pytest.raises(manifest.ManifestError, match=says):
        _manifest(tmp_path, extra)


def test_the_benchmarks_recorded_true_findings_read():
    from harness.bugs import manifest

    for slug in ("bitsandbytes-4bit-odd-length-last-element", "vllm-unified-attention-softcap-overflow-nan",
                 "gemlite-gemv-revsplitk-autotune-atomic"):
        e = manifest.read(ROOT / "bugs" / slug)
        assert e.fixed_known and all(k["why"] for k in e.fixed_known)


ATOMIC_TAIL = """
@triton.jit
def acc(x_ptr, out_ptr, n, MASKED: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    if MASKED:
        tl.atomic_add(out_ptr + offs, x, mask=offs < n)
    else:
        tl.atomic_add(out_ptr + offs, x)          # the tail adds past the end of out

def _run(x, masked):
    n = x.numel()
    out = torch.zeros(n)                            # zeroed for the atomic adds: not torch.empty
    acc[(triton.cdiv(n, 32),)](x, out, n, MASKED=masked, BLOCK=32)
    return out

def launch(x):
    return _run(x, False)

def launch_fixed(x):
    return _run(x, True)

def make_inputs(*, device, gen, n=100):
    return {"x": torch.randn(n, generator=gen)}

def reference(x):
    return x.double()
"""


def test_a_write_past_a_zeroed_allocation_of_the_launcher_is_caught(tmp_path):
    """torch.zeros in the launcher gets guard bands too (a finite fill: a NaN would absorb the add)."""
    path = _file(tmp_path, "atomic_tail.py", ATOMIC_TAIL)
    r = probe(path, detectors=["guards", "shapes"], options={"fuzz_trials": 6})
    assert r.by_code("P111") and "a tensor the launcher allocated" in r.by_code("P111")[0].message, r.text()
    fixed = probe(path, launcher="launch_fixed", detectors=["guards", "shapes"], options={"fuzz_trials": 6})
    assert fixed.ok and not fixed.findings, fixed.text()


CHUNKED = """
@triton.jit
def copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def launch(x, chunk):
    out = torch.empty_like(x)
    copy[(triton.cdiv(x.numel(), chunk),)](x, out, x.numel(), BLOCK=chunk)
    return out

def make_inputs(*, device, gen, n=256, chunk=64):
    return {"x": torch.randn(n, generator=gen), "chunk": chunk}

def reference(x, chunk):
    return x.double()
"""


def test_shape_fuzzing_skips_sizes_that_run_many_times_the_defaults_programs(tmp_path, monkeypatch):
    """chunk=1 runs 256 programs where the defaults run 4: under the interpreter that one size would
    take the whole budget (mamba's chunk scan at chunk_size=1: 30 s). Counted in a dry run."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from harness.probe.context import Context
    from harness.probe.detectors.shapes import PROGRAMS_FACTOR, programs, too_many_programs
    from harness.probe.target import load

    t = load(_file(tmp_path, "chunked.py", CHUNKED), backend="interpreter")
    ctx = Context(t, "interpreter", 0, "shapes")
    assert programs(ctx, t.sizes) == 4 and PROGRAMS_FACTOR == 8
    limits = {}
    assert not too_many_programs(ctx, {"n": 256, "chunk": 8}, limits)  # 32 programs: 8 x
    assert too_many_programs(ctx, {"n": 256, "chunk": 1}, limits)  # 256 programs
    assert not too_many_programs(ctx, {"n": 256, "chunk": 1}, {"exempt": lambda s: True})  # a threshold


def test_each_size_alone_is_tried_cheapest_first():
    """Under a time budget a flag at 1 (te-cross-entropy's weighted=1, the trigger) comes before a
    row made longer; the one-at-a-time sizes ascend in volume."""
    defaults = {"seq": 64, "vocab": 1000, "weighted": 0}
    from harness.probe import fuzz

    sizes = fuzz.plan(defaults, [1024], {"seq": (1, 64), "vocab": (2, 3000), "weighted": (0, 1)}, 0, 24)
    alone = [s for s in sizes if sum(s[k] != defaults[k] for k in s) == 1]
    first = alone[:4]
    assert [fuzz.volume(s) for s in first] == sorted(fuzz.volume(s) for s in first), first
    assert sizes.index({**defaults, "weighted": 1}) < sizes.index({**defaults, "vocab": 1023}), sizes[:6]


# out[i] = table[idx[i]], the table load unmasked (TorchInductor's indirect load before its fix): the
# lanes past n index the table with whatever the masked index load left in them
GATHER = """
@triton.jit
def gather(table_ptr, idx_ptr, out_ptr, n, MASKED: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = tl.load(idx_ptr + offs, mask=offs < n)
    x = tl.load(table_ptr + i, mask=offs < n) if MASKED else tl.load(table_ptr + i)
    tl.store(out_ptr + offs, x, mask=offs < n)

def launch(table, idx, masked=0, over=0):
    out = torch.empty(idx.shape, dtype=table.dtype)
    gather[(triton.cdiv(idx.numel(), 64),)](table, idx, out, idx.numel(), MASKED=bool(masked), BLOCK=64)
    return out

def make_inputs(*, device, gen, vocab=100, n=128, masked=0, over=0):
    return {"table": torch.randn(vocab, generator=gen), "idx": torch.randint(0, vocab, (n,), generator=gen) + over,
            "masked": masked, "over": over}

def reference(table, idx, masked, over):
    return table[idx.long().clamp(max=table.numel() - 1)].double()
"""


def test_memcheck_tries_the_defaults_own_tail_and_an_address_only_poison_makes_is_a_warning(tmp_path):
    path = _file(tmp_path, "gather.py", GATHER)
    r = probe(path, detectors=["memcheck"])  # n=128, two full blocks: nothing past the end at the defaults
    loads = r.by_code("P102")
    assert loads and r.ok and all(f.severity == "warning" for f in loads), r.text()
    assert "n=127" in loads[0].message and "masked-off lanes" in loads[0].message
    assert probe(path, detectors=["memcheck"], sizes={"masked": 1}).by_code("P102") == []
    # indices past the table in the lanes that are not masked: an error, whatever the masked lanes hold
    past = probe(path, detectors=["memcheck"], sizes={"over": 100})
    assert not past.ok and past.by_code("P102")[0].severity == "error", past.text()
