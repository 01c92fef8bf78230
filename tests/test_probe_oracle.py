"""The probe's oracle and severities (issue #37, items 4 and 5): "wrong" is worse than a correct
kernel in its own number formats could be (the error floor, ``harness.probe.floor``), and a
finding's severity is what the user will see: a silent wrong result is an error; TF32 left at
Triton's default and masked lanes that 0 makes right are warnings; an exception at a fuzzed size
is a note; ``--strict`` fails on warnings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness import probe
from harness.probe.findings import ERROR, INFO, WARNING

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "probe_fixtures" / "severity"
CASES = ROOT / "cases"
RMSNORM = FIX / "rmsnorm_bwd.py"
SEEDS = range(6)  # seeds of the one-column RMSNorm backward: some the fixed tolerance fails, some it passes


def _case(slug: str, variant: str, launcher: str, **kw):
    return probe(str(CASES / slug / f"{variant}.py"), inputs=str(CASES / slug / "case.py"), launcher=launcher,
                 backends=["interpreter"], **kw)


@pytest.fixture
def interpreted(monkeypatch):
    """The fixture's kernels, jitted for the interpreter in this process, with the probe's loader."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from harness.probe import target

    def load(launcher: str):
        return target.load(str(RMSNORM), launcher=launcher)
    return load


def _runs(t, seed: int):
    """(kernel's result, float64 reference, fixed tolerance) at the fixture's one-column default sizes."""
    from harness.probe import execute as X
    from harness.run.triton_compat import patched
    from harness.run.worker import call_with

    inputs = X.make(t, t.sizes, seed, "interpreter")
    ref = X.reference(t, inputs)
    with patched(interpreter=True):  # as a worker runs it (a helper jitted before TRITON_INTERPRET was set too)
        out = call_with(t.launcher, X.clone_inputs(inputs))
    return out, ref, t.tolerance_for(out.dtype, ref)


def test_the_floor_excuses_a_correct_fp32_kernel_where_the_reduction_is_ill_conditioned(interpreted):
    from harness.core import compare
    from harness.probe import floor

    t = interpreted("launch")
    failed_fixed = 0
    for seed in SEEDS:
        out, ref, (rtol, atol) = _runs(t, seed)
        failed_fixed += not compare.compare(out, ref, rtol, atol)["close"]
        got = compare.compare(out, ref, rtol, atol, floor.allowance(ref))
        assert got["close"], (seed, got)
    assert failed_fixed >= 2  # the fixed per-dtype tolerance alone calls this correct kernel wrong


def test_the_floor_does_not_excuse_a_precision_bug_at_the_same_sizes(interpreted):
    from harness.core import compare
    from harness.probe import floor

    t = interpreted("launch_bf16")
    for seed in SEEDS:
        out, ref, (rtol, atol) = _runs(t, seed)
        allow = floor.allowance(ref)
        got = compare.compare(out, ref, rtol, atol, allow)
        assert not got["close"] and got["max_abs"] > 100 * float(allow.max()), (seed, got)


def test_the_floor_is_estimated_from_the_computation_and_only_once_per_reference(monkeypatch):
    import torch

    from harness.probe import floor

    calls = []

    class T:
        @staticmethod
        def reference(x):
            calls.append(1)
            x = x.double()
            return x - x.mean()  # cancels: the result is far smaller than its terms

    x = torch.full((4,), 1000.0) + torch.tensor([0.0, 1e-3, -1e-3, 2e-3])
    ref = T.reference(x)
    floor.remember(ref, {"x": x}, lambda rounded: rounded(lambda: T.reference(x)))
    a = floor.allowance(ref)
    assert len(calls) == 1 + floor.SAMPLES and floor.allowance(ref) is a and len(calls) == 1 + floor.SAMPLES
    # one rounding of float32 at 1000 (6e-5) moves the centred values, not 2**-24 of their size (1e-10)
    assert float(a.min()) > 1e-6 and float(a.max()) < 1e-2
    wide = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)  # float64 inputs: a float64 kernel's floor
    assert floor.accumulator_unit({"x": wide}) == 2.0 ** -53 and floor.accumulator_unit({"x": x}) == 2.0 ** -24


def test_the_probe_is_quiet_on_the_ill_conditioned_reduction_and_catches_the_precision_bug():
    quiet = probe(str(RMSNORM), detectors=["reference", "shapes"], backends=["interpreter"], seed=3,
                  options={"fuzz_trials": 6})
    assert quiet.ok and not quiet.warnings, quiet.text()
    bug = probe(str(RMSNORM), launcher="launch_bf16", detectors=["reference"], backends=["interpreter"], seed=3)
    (f,) = bug.by_code("P201")
    assert f.severity == ERROR and "rows=2, cols=1" in f.message, bug.text()


def test_a_real_precision_bug_of_the_casebook_is_still_an_error_and_its_fix_quiet():
    sizes = {"n_rows": 1024, "n_cols": 64}
    broken = _case("bf16-accumulation", "broken", "bias_grad", detectors=["reference"], sizes=sizes)
    assert [f.code for f in broken.errors] == ["P201"], broken.text()
    assert _case("bf16-accumulation", "fixed", "bias_grad", detectors=["reference"], sizes=sizes).ok


def test_tf32_left_at_triton_default_is_a_warning_named_with_its_lesson():
    sizes = {"m": 33, "n": 40, "k": 512}
    r = _case("matmul-tf32-default", "broken", "matmul", detectors=["reference", "shapes"], sizes=sizes,
              options={"fuzz_trials": 4})
    (f,) = r.by_code("P204")
    assert f.severity == WARNING and "matmul-tf32-default" in f.message, r.text()
    assert r.ok and not r.errors, r.text()  # shape fuzzing sets the TF32-only sizes aside too
    assert r.diagnosis and r.diagnosis[0]["case"] == "matmul-tf32-default", r.text()  # the warning explained


def test_tf32_chosen_in_the_source_is_the_kernels_own_format(tmp_path):
    from harness.probe.tf32_rounding import chosen

    src = tmp_path / "k.py"
    src.write_text("acc = tl.dot(a, b, acc)  # input_precision left at its default\n"
                   "acc = tl.dot(a, b, acc,\n"
                   "             input_precision='tf32')\n")
    assert not chosen([f"{src}:1"]) and chosen([f"{src}:2"]) and not chosen([f"{src}:1", f"{src}:2"])


def test_masked_lanes_right_with_zero_are_a_warning_under_every_detector():
    r = probe(str(FIX / "masked_sum.py"), backends=["interpreter"], options={"fuzz_trials": 6})
    assert r.by_code("P203") and all(f.severity == WARNING for f in r.by_code("P203")), r.text()
    assert r.ok and not r.errors, r.text()


def test_an_exception_at_a_fuzzed_size_is_a_note_with_its_sizes():
    r = probe(str(FIX / "head_pow2.py"), detectors=["reference", "shapes"], backends=["interpreter"],
              options={"fuzz_trials": 8})
    (f,) = r.by_code("P405")
    assert f.severity == INFO and "power of 2" in f.message and f.sizes["head"] & (f.sizes["head"] - 1), r.text()
    assert r.ok and not r.warnings and not r.by_code("P401"), r.text()


def test_a_device_fault_is_still_an_error_at_any_size():
    from harness.probe.context import device_fault

    try:
        try:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        except RuntimeError as e:
            raise ValueError("the launcher wrapped it") from e
    except ValueError as e:
        assert device_fault(e)
    assert not device_fault(ValueError("Shape element 0 must be a power of 2"))


def test_strict_fails_on_the_tf32_warning_and_plain_does_not():
    slug = CASES / "matmul-tf32-default"
    cmd = [sys.executable, "-m", "harness", "probe", str(slug / "broken.py"), "--inputs", str(slug / "case.py"),
           "--launcher", "matmul", "--backend", "interpreter", "--only", "reference", "--sizes", "m=33,n=40,k=512",
           "-q"]
    assert subprocess.run(cmd, cwd=ROOT, capture_output=True).returncode == 0
    assert subprocess.run(cmd + ["--strict"], cwd=ROOT, capture_output=True).returncode == 1


ANGLE = FIX / "angle_f64.py"


def test_the_floor_takes_float64_from_the_kernels_own_casts(monkeypatch):
    """A kernel that computes its angles in float64 (``.to(tl.float64)``) gets float64's floor: its
    fp32-rounded product (the bug) is caught, its float64 product (the fix) quiet. In float32's
    unit the floor would excuse the bug as what any fp32 kernel does (xformers-rope-padded's miss)."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from harness.core import compare
    from harness.probe import floor, target
    from harness.run.triton_compat import launched_kernels

    verdicts = {}
    for launcher in ("launch", "launch_f32"):
        t = target.load(str(ANGLE), launcher=launcher)
        out, ref, (rtol, atol) = _runs(t, 0)
        assert floor.accumulator_unit({}, launched_kernels()) == 2.0 ** -53
        verdicts[launcher] = compare.compare(out, ref, rtol, atol, floor.allowance(ref))["close"]
        if launcher == "launch_f32":  # the old rule's unit: the same error excused
            monkeypatch.setattr(floor, "computes_in_float64", lambda k: False)
            again = X_reference(t)
            assert floor.accumulator_unit({}, launched_kernels()) == 2.0 ** -24
            assert compare.compare(out, again, rtol, atol, floor.allowance(again))["close"]
    assert verdicts == {"launch": True, "launch_f32": False}


def X_reference(t):
    from harness.probe import execute as X

    return X.reference(t, X.make(t, t.sizes, 0, "interpreter"))


def test_a_float64_pointer_makes_a_float64_floor_and_fp32_kernels_keep_float32s():
    import torch

    from harness.probe import floor

    class K:  # a launched kernel whose source names no float64
        src = "def k(x_ptr):\n    x = tl.load(x_ptr)\n"
    assert floor.accumulator_unit({"x": torch.zeros(2)}, [K()]) == 2.0 ** -24
    assert not floor.computes_in_float64(K())
    K.src += "    y = x.to(tl.float64)\n"
    assert floor.computes_in_float64(K())
    from harness.run import triton_compat

    k = type("K2", (), {"src": "def k(p):\n    pass\n"})()
    triton_compat.WIDE.add(id(k))
    try:
        assert floor.accumulator_unit({"x": torch.zeros(2)}, [k]) == 2.0 ** -53
    finally:
        triton_compat.WIDE.discard(id(k))


def test_the_probe_catches_the_fp32_product_in_a_float64_kernel_and_passes_its_fix():
    bug = probe(str(ANGLE), launcher="launch_f32", detectors=["reference"], backends=["interpreter"])
    assert [f.code for f in bug.errors] == ["P201"], bug.text()
    assert probe(str(ANGLE), detectors=["reference"], backends=["interpreter"]).ok


LOCK_SUM = FIX / "lock_sum.py"


def test_sums_under_a_lock_in_another_order_are_a_nondeterminism_warning_not_an_error():
    """Programs adding partial sums under a spin lock give other last bits in another order, within
    the tolerance: the P303 warning float atomics get (the order detector called it a P302 error:
    Cut Cross-Entropy's lock-add on its fixed versions). A lost update stays an error."""
    ok = probe(str(LOCK_SUM), detectors=["order"], backends=["interpreter"])
    assert not ok.errors, ok.text()
    (w,) = ok.by_code("P303")
    assert w.severity == WARNING and "under a lock" in w.message, ok.text()
    lost = probe(str(LOCK_SUM), launcher="launch_unlocked", detectors=["order"], backends=["interpreter"])
    assert [f.code for f in lost.errors] == ["P302"], lost.text()


MEAN = FIX / "masked_mean.py"


def test_shape_fuzzing_reports_a_failure_that_0_in_masked_lanes_keeps_as_a_gpu_shows_it():
    """Poison in masked lanes without other= turns every result NaN; where 0 there (what a GPU gives)
    still leaves the mean wrong, the finding is that wrong mean, not the poison's NaN; the correct
    twin, wrong only through the poison, stays a warning."""
    bug = probe(str(MEAN), launcher="launch_block_divisor", detectors=["reference", "shapes"],
                backends=["interpreter"], options={"fuzz_trials": 6})
    (f,) = bug.by_code("P401")
    assert f.severity == ERROR and f.message.startswith("wrong values") and "nan" not in f.message, bug.text()
    ok = probe(str(MEAN), detectors=["reference", "shapes"], backends=["interpreter"], options={"fuzz_trials": 6})
    assert ok.ok and not ok.errors and ok.by_code("P203"), ok.text()


MIX = FIX / "softmax_mix_bf16.py"


def test_a_reference_computed_in_bf16_is_judged_by_its_float64_self(monkeypatch):
    """A reference written in its inputs' bf16 is itself off where the terms cancel; the float32
    kernel is right (within bf16's tolerance of the same formula in float64) and must stay quiet,
    while a real bug (exp2 for exp) is still an error."""
    import torch

    from harness.core import compare
    from harness.probe import execute as X
    from harness.probe import floor, target
    from harness.run.triton_compat import patched
    from harness.run.worker import call_with

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    t = target.load(str(MIX), launcher="launch")
    inputs = X.make(t, t.sizes, 0, "interpreter")
    with patched(interpreter=True):
        out = call_with(t.launcher, X.clone_inputs(inputs))
    truth = t.reference(**floor.widened(inputs)).double()
    rtol, atol = t.tolerance_for(out.dtype, truth)
    assert compare.compare(out.cpu(), truth, rtol, atol)["close"]  # the kernel is right
    assert not compare.compare(out.cpu(), X.reference(t, inputs), rtol, atol)["close"]  # the bf16 reference is not
    ok = probe(str(MIX), detectors=["reference"], backends=["interpreter"])
    assert ok.ok and not ok.findings, ok.text()
    bug = probe(str(MIX), launcher="launch_exp2", detectors=["reference"], backends=["interpreter"])
    assert [f.code for f in bug.errors] == ["P201"], bug.text()


GATHER = FIX / "gather_tail.py"


def test_a_process_killed_at_a_fuzzed_size_by_an_access_outside_memory_is_named_so():
    """Unmasked index and gather loads at a length that is not a multiple of the block: the
    interpreter's process dies at a fuzzed size (SIGSEGV); the error names the access the bounds
    check finds at those sizes. The masked twin is quiet at every size."""
    bug = probe(str(GATHER), launcher="launch_unmasked", detectors=["shapes", "diagnose"], backends=["interpreter"],
                options={"fuzz_trials": 6})
    (f,) = bug.by_code("P001")
    assert f.severity == ERROR and "SIGSEGV" in f.message, bug.text()
    assert "an access outside memory" in f.message and "past the end of 'idx_ptr'" in f.message, bug.text()
    ok = probe(str(GATHER), detectors=["shapes", "diagnose"], backends=["interpreter"], options={"fuzz_trials": 6})
    assert ok.ok and not ok.findings, ok.text()


QUANT = FIX / "quantize_rows.py"


def test_an_integer_code_one_off_at_a_rounding_tie_is_within_the_floor_and_a_truncation_is_not():
    """A quantizer's int8 codes: at a tie (x * 127 / max|x| = k + 1/2) the kernel's ties away from zero and the
    reference's ties to even are both correct, one code apart; truncating is a code off past every half."""
    quiet = probe(str(QUANT), detectors=["reference", "shapes"], backends=["interpreter"], budget=0,
                  options={"fuzz_trials": 6})
    assert quiet.ok and not quiet.warnings, quiet.text()
    bug = probe(str(QUANT), launcher="launch_truncate", detectors=["reference"], backends=["interpreter"], budget=0)
    (f,) = bug.by_code("P201")
    assert f.severity == ERROR, bug.text()


def test_the_exact_comparison_alone_calls_the_correct_quantizer_wrong(interpreted_quant):
    """What the integer floor is for: the kernel's codes differ from the reference's at its ties, the element
    the floor allows exactly there, and nowhere else."""
    import torch

    from harness.core import compare
    from harness.probe import floor

    out, ref = interpreted_quant
    o = out.to(torch.float64).reshape(-1)
    assert not compare.compare(out, ref.reshape(out.shape), 0.0, 0.0)["close"]
    allow = floor.integer_allowance(ref, o)
    differ = (o - ref.reshape(-1)).abs() > 0
    assert bool((allow[differ] >= 1).all()) and int((allow > 0).sum()) < ref.numel() // 4


@pytest.fixture
def interpreted_quant(monkeypatch):
    """The correct quantizer's codes and the float64 reference (with its floor's record) at the defaults."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from harness.probe import execute as X
    from harness.probe import target
    from harness.run.triton_compat import patched
    from harness.run.worker import call_with

    t = target.load(str(QUANT), launcher="launch")
    inputs = X.make(t, t.sizes, 0, "interpreter")
    ref = X.reference(t, inputs)
    with patched(interpreter=True):
        out = call_with(t.launcher, X.clone_inputs(inputs))
    return out, ref


def test_an_integer_the_reference_computes_exactly_stays_exact():
    """Integer-valued floats truncated: a correct fp32 kernel computes them exactly, so no element gets a code of
    licence (moved, 200.0 would truncate to 199), and a result one off is wrong."""
    import torch

    from harness.probe import execute as X
    from harness.probe import floor

    x = torch.arange(0, 256, dtype=torch.float32)

    def reference(x):
        return (x.double() * 2.0 + 1.0).to(torch.int32)

    ref = X.as_reference(reference(x))
    floor.remember(ref, {"x": x}, lambda rounded: X.as_reference(rounded(lambda: reference(x.clone()))))
    off = ref.reshape(-1) + 1
    allow = floor.integer_allowance(ref, off)
    assert allow is not None and float(allow.max()) == 0.0


def test_the_integer_floor_stops_when_the_differences_cannot_be_ties():
    from harness.probe.floor import TIE_ODDS, tie_runs

    assert not tie_runs(0, 0)  # nothing left to cover
    assert tie_runs(0, 1000)  # no run yet: always one
    assert tie_runs(1, 3) and not tie_runs(13, 3)  # 13 runs that covered none of 3: (3/4)**39
    assert not tie_runs(1, TIE_ODDS)  # one run that covered none of 39


GATE = FIX / "gate_fp16_widened.py"


def test_a_result_kept_in_its_inputs_fp16_and_widened_after_is_judged_with_fp16s_unit():
    """An fp16 gate joined by torch.cat to a float32 one arrives as float32 with fp16's rounding in it: a correct
    kernel was called wrong (1,239 of 4,096 elements past float32's tolerance; seen on the CPU board of 6429911 at
    a fuzzed size of sglang's gdn gating, both versions alike). The elements that hold an fp16 value exactly get
    one fp16 unit; a wrong formula is still an error."""
    import torch

    from harness.probe import floor

    ok = probe(str(GATE), detectors=["reference", "shapes"], backends=["interpreter"])
    assert ok.ok and not ok.problems, ok.text()
    bug = probe(str(GATE), launcher="launch_no_bias", detectors=["reference"], backends=["interpreter"])
    assert [f.code for f in bug.errors] == ["P201"], bug.text()
    ref = torch.tensor([0.49902, 0.3, 2.0], dtype=torch.float64)
    ref._casebook_floor = ({"b": torch.zeros(3, dtype=torch.float16), "s": torch.zeros(3)}, None)
    unit = floor.stored(torch.tensor([0.4987793, 0.3, 2.5]), ref)
    assert unit[0] == 2.0 ** -12 and unit[1] == 0 and unit[2] == 2.0 ** -9  # fp16's unit where the value is fp16's
    ref._casebook_floor = ({"s": torch.zeros(3)}, None)
    assert floor.stored(torch.tensor([0.5, 0.3, 2.5]), ref) is None  # no narrower format among the inputs
