"""harness.run.analyses: the instrumented interpreter's patched methods call each analysis whose
option is on, at each point of a launch, and no other."""

import importlib.util
import textwrap

KERNEL = textwrap.dedent('''
    import triton
    import triton.language as tl


    @triton.jit
    def shift(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs + 1, mask=offs < n)  # one lane past the end of x
        tl.store(out_ptr + offs, x, mask=offs < n)
''')


def _kernel(tmp_path, monkeypatch, name="shift_kernel", source=KERNEL):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_each_active_analysis_is_called_at_each_point_of_a_launch(tmp_path, monkeypatch):
    import torch

    from harness.run import interp_instrument as I
    from harness.run.analyses.base import Analysis

    class Count(Analysis):
        def __init__(self, name, on):
            self.name, self.is_on, self.seen = name, on, []

        def on(self, options):
            return self.is_on

        def access(self, rec, ptrs, addrs, mask, kind):
            self.seen.append(I.KIND_NAMES[kind])
            return mask

        def program_starts(self, rec):
            self.seen.append("program")

        def launch_ends(self, rec):
            self.seen.append("end")

    mod = _kernel(tmp_path, monkeypatch)
    on, off = Count("on", True), Count("off", False)
    x, out = torch.arange(16, dtype=torch.float32)[:10], torch.zeros(10)  # the lane past x is x's storage
    with I.instrumented(I.Options(memcheck=True), analyses=[I.default_analyses()[0], on, off]) as rec:
        mod.shift[(2,)](x, out, 10, BLOCK=8)
    assert on.seen == ["program", "load", "store"] * 2 + ["end"] and off.seen == []
    ((kind, tensor, side, _), hit), = rec.oob.items()  # memcheck, first in the list, took the lane out
    assert (kind, tensor, side, hit["lanes"]) == ("load", "x_ptr", "past the end", 1)
    assert out[:9].tolist() == x[1:].tolist()


def test_an_option_turned_off_between_launches_turns_its_analysis_off(tmp_path, monkeypatch):
    import torch

    from harness.run import interp_instrument as I

    mod = _kernel(tmp_path, monkeypatch)
    x, out = torch.arange(16, dtype=torch.float32)[:10], torch.zeros(10)
    with I.instrumented(I.Options(memcheck=True)) as rec:
        mod.shift[(2,)](x, out, 10, BLOCK=8)
        rec.options.memcheck = False
        rec.oob.clear()
        mod.shift[(2,)](x, out, 10, BLOCK=8)
        assert out[9] == 10 and rec.oob == {} and [a.name for a in rec.active] == ["poison", "tf32"]


TUNED = textwrap.dedent('''
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK": 4}), triton.Config({"BLOCK": 8})], key=["n"])
    @triton.jit
    def scale(x_ptr, out_ptr, n, k, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * (k * k), mask=offs < n)
''')


def _tuned(tmp_path, monkeypatch):
    return _kernel(tmp_path, monkeypatch, "tuned_kernel", TUNED)


def _launch(mod, k=3):
    import torch
    import triton

    from harness.run.triton_compat import patched

    x, out = torch.arange(8, dtype=torch.float32), torch.zeros(8)
    with patched(interpreter=True, bench_calls=1):  # the autotuner's benchmark on the CPU
        mod.scale[lambda meta: (triton.cdiv(8, meta["BLOCK"]),)](x, out, 8, k)
    return out


def test_the_arithmetic_and_autotuner_hooks_are_installed_only_where_an_analysis_on_asks(tmp_path, monkeypatch):
    from triton.runtime.autotuner import Autotuner
    from triton.runtime.interpreter import InterpreterBuilder

    from harness.run import interp_instrument as I

    before = (InterpreterBuilder.create_mul, Autotuner.run)
    with I.instrumented(I.Options()):
        assert (InterpreterBuilder.create_mul, Autotuner.run) == before
    with I.instrumented(I.Options(int_wrap=True, fresh_tuning=True)):
        assert InterpreterBuilder.create_mul is not before[0] and Autotuner.run is not before[1]
    with I.hooked(I.Options(int_wrap=True, fresh_tuning=True)):  # every backend: the autotuner's alone
        assert InterpreterBuilder.create_mul is before[0] and Autotuner.run is not before[1]
    assert (InterpreterBuilder.create_mul, Autotuner.run) == before


def test_intwrap_records_a_signed_product_that_wraps_at_the_kernels_line(tmp_path, monkeypatch):
    from harness.run import interp_instrument as I

    mod = _tuned(tmp_path, monkeypatch)
    line = TUNED.splitlines().index(next(x for x in TUNED.splitlines() if "k * k" in x)) + 1
    with I.instrumented(I.Options(int_wrap=True)) as rec:
        _launch(mod, k=3)
        assert rec.wraps == []
        _launch(mod, k=70000)  # 70000 * 70000 is past 2**31
    [(where, what)] = rec.wraps
    assert where.endswith(f"tuned_kernel.py:{line}") and what == "int32 * gives 605032704 for 4900000000", rec.wraps
    with I.instrumented(I.Options()) as rec:
        _launch(mod, k=70000)
    assert rec.wraps == []


SHIFTS = textwrap.dedent('''
    import triton
    import triton.language as tl


    @triton.jit
    def pack(x_ptr, out_ptr, tag_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n)
        tl.store(out_ptr + offs, (x & 0xF) << 28, mask=offs < n)  # into the sign bit: packing, on purpose
        tl.store(tag_ptr + pid, pid << 40)  # past the 32 bits of pid's type
''')


def test_intwrap_records_a_shift_past_its_types_width_and_not_one_into_the_sign_bit(tmp_path, monkeypatch):
    import torch

    from harness.run import interp_instrument as I

    mod = _kernel(tmp_path, monkeypatch, "shifts_kernel", SHIFTS)
    line = SHIFTS.splitlines().index(next(x for x in SHIFTS.splitlines() if "pid << 40" in x)) + 1
    x, out, tag = torch.arange(16, dtype=torch.int32), torch.zeros(16, dtype=torch.int32), torch.zeros(2, dtype=torch.int32)
    with I.instrumented(I.Options(int_wrap=True)) as rec:
        mod.pack[(2,)](x, out, tag, 16, BLOCK=8)
    [(where, what)] = rec.wraps
    assert where.endswith(f"shifts_kernel.py:{line}") and what == "int32 << 40: a shift past the 32 bits of its type"


def test_fresh_tuning_empties_the_tuning_cache_before_each_autotuned_launch(tmp_path, monkeypatch):
    from harness.run import interp_instrument as I

    mod = _tuned(tmp_path, monkeypatch)
    for block in (I.instrumented, I.hooked):
        mod.scale.cache.clear()
        with block(I.Options()) as rec:
            _launch(mod)
            _launch(mod)
        assert rec.retuned == 0 and len(mod.scale.cache) == 1  # tuned once, the config kept for the key
        with block(I.Options(fresh_tuning=True)) as rec:
            _launch(mod)
            mod.scale.cache[("sentinel",)] = "kept only until the next launch"
            assert _launch(mod).tolist() == [9.0 * i for i in range(8)]
        assert rec.retuned == 2 and ("sentinel",) not in mod.scale.cache


def test_an_analysis_that_raises_after_a_launch_is_its_own_failure_and_the_launch_stands(tmp_path, monkeypatch):
    """A board row (2 x H200, 75051e9) held "the launcher raised" (P001, an error) where the race analysis had
    raised inside NumPy after the launch: the probe's failure, reported as the kernel's. The launch stands and the
    recorder keeps the failure; the detector's worker turns it into a note, never an error."""
    import torch

    from harness.probe.context import Context
    from harness.probe.worker import _analysis_failures
    from harness.run import interp_instrument as I
    from harness.run.analyses.base import Analysis

    class Broken(Analysis):
        name = "broken"

        def on(self, options):
            return True

        def launch_ends(self, rec):
            raise TypeError("Cannot compare structured arrays")

    mod = _kernel(tmp_path, monkeypatch)
    x, out = torch.arange(16, dtype=torch.float32), torch.zeros(8)
    with I.instrumented(I.Options(), analyses=[Broken()]) as rec:
        mod.shift[(1,)](x, out, 8, BLOCK=8)
    assert out.tolist() == x[1:9].tolist() and rec.failed == ["broken: TypeError: Cannot compare structured arrays"]
    ctx = Context(target=None, backend="interpreter", seed=0, name="race", failed=list(rec.failed))
    (note,) = _analysis_failures(ctx)
    assert (note.code, note.severity, note.detector) == ("P000", "info", "race") and ctx.failed == []
    assert "broken: TypeError" in note.message and "not a finding about the kernel" in note.message


def test_unique_pairs_is_numpys_unique_rows_without_a_structured_view():
    import numpy as np

    from harness.run.analyses.races import unique_pairs

    rng = np.random.default_rng(0)
    a = rng.integers(0, 50, 4000).astype(np.uint64) + np.uint64(2**40)
    b = rng.integers(0, 7, 4000).astype(np.int64)
    got_a, got_b = unique_pairs(a, b)
    want = np.unique(np.stack([a, b.astype(np.uint64)], axis=1), axis=0)
    assert got_a.tolist() == want[:, 0].tolist() and got_b.tolist() == want[:, 1].astype(np.int64).tolist()
    assert [x.size for x in unique_pairs(a[:0], b[:0])] == [0, 0]


BAD_ARANGE = textwrap.dedent('''
    import triton
    import triton.language as tl


    @triton.jit
    def odd(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, 3)  # Triton refuses a range that is not a power of two
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
''')


def test_an_analysis_that_raises_in_a_program_is_the_probes_failure_not_the_launchers(tmp_path, monkeypatch):
    """What the instrumented interpreter's own code raises while a program runs (the interpreter wraps it in its own
    error) is reported as the probe's note, never "the launcher raised" (P001, an error); what Triton raises for the
    kernel, or the launcher itself, stays P001."""
    import pytest
    import torch

    from harness.probe.context import Context, crash, own_failure
    from harness.run import interp_instrument as I
    from harness.run.analyses import races

    ctx = Context(target=None, backend="interpreter", seed=0, name="race")
    mod = _kernel(tmp_path, monkeypatch)
    x, out = torch.arange(16, dtype=torch.float32), torch.zeros(8)
    monkeypatch.setattr(races, "MAX_RECORDED", "many")  # the race analysis's own comparison now raises
    with pytest.raises(Exception) as ours:
        with I.instrumented(I.Options(race=True)):
            mod.shift[(1,)](x, out, 8, BLOCK=8)
    where = own_failure(ours.value)
    assert where is not None and where.startswith("harness/run/analyses/races.py:")
    note = crash(ctx, ours.value, {"n": 8})
    assert (note.code, note.severity) == ("P000", "info") and "not a finding about the kernel" in note.message
    monkeypatch.undo()

    odd = _kernel(tmp_path, monkeypatch, "odd_kernel", BAD_ARANGE)
    with pytest.raises(Exception) as kernels:
        with I.instrumented(I.Options(race=True)):
            odd.odd[(1,)](x, out, 8, BLOCK=8)
    assert own_failure(kernels.value) is None and crash(ctx, kernels.value).code in ("P001", "P003")
    try:
        raise ValueError("the launcher's own check")
    except ValueError as e:
        assert own_failure(e) is None and crash(ctx, e).code == "P001" and crash(ctx, e).severity == "error"
