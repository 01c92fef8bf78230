"""The diagnosis experiments that tell the casebook's traps apart by their mechanism (issue #20):
each on a small kernel that shows what it looks for and on one that does not, run in this
process under the interpreter; and the cases they were written for, named right."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from harness.probe.diagnosis import diagnose
from harness.probe.findings import Finding

ROOT = Path(__file__).resolve().parents[1]

HEAD = "import torch\nimport triton\nimport triton.language as tl\n\n"


@contextlib.contextmanager
def context(tmp_path, monkeypatch, source: str = "", slug: str = ""):
    """A diagnosis Context under the patched interpreter on ``source`` (a probe file), on a case's
    broken kernel, or on ``source`` as the kernel file of a case."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from harness.core.spec import load_spec
    from harness.probe.context import Context
    from harness.probe.target import load
    from harness.run.triton_compat import patched

    if slug:
        spec = load_spec(ROOT / "cases" / slug)
        kernel = spec.path / "broken.py"
        if source:
            kernel = tmp_path / "kernel.py"
            kernel.write_text(source)
        args = (str(kernel), str(spec.path / "case.py"), spec.launcher)
    else:
        (tmp_path / "k.py").write_text(HEAD + source)
        args = (str(tmp_path / "k.py"), None, "launch")
    with patched(interpreter=True, bench_calls=2) as counter:
        yield Context(load(*args, backend="interpreter"), "interpreter", 0, "diagnose", counter)


def experiment(name: str):
    from harness.probe.experiments import registry

    return registry()[name].run


def wrong(message: str = "at n=3: wrong") -> list:
    return [Finding("P201", "reference", "interpreter", message)]


# -- orders: wrong in both program orders (computed wrong) or put right in one (overwritten) --------

READS_PAST = '''
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs + 1))  # reads one element on, and no masks

def launch(x):
    out = torch.empty_like(x)
    k[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out

def make_inputs(*, device, gen, n=200):
    return {"x": torch.randn(n, generator=gen)}

def reference(x):
    return x.double()
'''

# each program writes its own block right and zeros over the block before it: in program order
# every block but the last is overwritten; in reverse each owner writes last and all is right
OVERWRITES = '''
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    lanes = tl.arange(0, 2 * BLOCK)
    offs = (tl.program_id(0) - 1) * BLOCK + lanes
    m = (offs >= 0) & (offs < n)
    v = tl.load(x_ptr + offs, mask=m, other=0.0)
    tl.store(out_ptr + offs, tl.where(lanes >= BLOCK, v, 0.0), mask=m)

def launch(x):
    out = torch.empty_like(x)
    k[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out

def make_inputs(*, device, gen, n=256):
    return {"x": torch.randn(n, generator=gen)}

def reference(x):
    return x.double()
'''


def test_orders_sees_elements_wrong_in_both_program_orders(tmp_path, monkeypatch):
    with context(tmp_path, monkeypatch, READS_PAST) as ctx:
        ev = experiment("orders")(ctx, {"n": 200})
    assert "in order and in reverse" in ev.get("wrong-any-order", ""), ev


def test_orders_is_quiet_where_the_owner_writing_last_puts_the_result_right(tmp_path, monkeypatch):
    from harness.probe.experiments import outcome

    with context(tmp_path, monkeypatch, OVERWRITES) as ctx:
        assert outcome(ctx, {"n": 256})[0] == "wrong"  # in program order
        assert experiment("orders")(ctx, {"n": 256}) == {}


def test_a_read_past_the_end_that_reaches_the_result_is_named_before_the_stray_store():
    """attention-seq-tail reads keys past the sequence and writes rows past it: the rows its own
    programs compute are wrong in any order, so the read is the trap; a stray store alone (add-
    missing-mask, conv2d-channel-mask: right in one order) stays a write."""
    both = {"oob-load": "load past the end", "oob-store": "store past the end"}
    d = diagnose(wrong(), {**both, "wrong-any-order": "wrong in both orders"})
    assert d[0]["defect"] == "out-of-bounds-read" and d[0]["case"] == "attention-seq-tail", d
    assert diagnose(wrong(), both)[0]["defect"] == "out-of-bounds-write"


# -- where the experiments start -------------------------------------------------------------------

def test_sizes_wrong_only_after_shape_fuzzings_other_launches_start_the_experiments_at_the_defaults(
        tmp_path, monkeypatch):
    """autotune-key-missing-shape's shrunk failure (kv_rank=1) was wrong only because shape fuzzing
    had tuned that row count at another width; in a fresh process no config fits it. The
    experiments start at the default sizes instead, where the reused config shows."""
    from harness.probe.detectors.diagnose import run
    from harness.probe.experiments import outcome

    with context(tmp_path, monkeypatch, slug="autotune-key-missing-shape") as ctx:
        shrunk = {"rows": 1, "kv_rank": 1, "q_rank": 513}
        assert outcome(ctx, shrunk)[0] == "refused"
        ctx.board.outcomes.clear()
        ctx.board.failing = shrunk
        run(ctx)
    assert "autotune-reuse" in ctx.board.evidence, ctx.board


# -- widen: too narrow a float type, and an error that builds up along a size -----------------------

RUNNING_SUM = '''
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=x_ptr.dtype.element_ty)  # the input's type: in fp16 the sum passes 65504
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0))

def launch(x):
    out = torch.empty(1, dtype=x.dtype)
    k[(1,)](x, out, x.numel(), BLOCK=16)
    return out

def make_inputs(*, device, gen, n=4096):
    return {"x": torch.full((n,), 32.0, dtype=torch.float16)}

def reference(x):
    return x.double().sum().reshape(1)
'''

WRONG_SCALE = '''
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

def launch(x):
    out = torch.empty_like(x)
    k[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), BLOCK=64)
    return out

def make_inputs(*, device, gen, n=256):
    return {"x": torch.randn(n, generator=gen).half()}

def reference(x):
    return 3 * x.double()
'''


def test_widen_sees_a_running_sum_too_narrow_for_its_length(tmp_path, monkeypatch):
    with context(tmp_path, monkeypatch, RUNNING_SUM) as ctx:
        ev = experiment("widen")(ctx, {"n": 4096})
    assert "'x' (float16)" in ev.get("wider-dtype", "") and "right at n=1024" in ev.get("length", ""), ev


def test_widen_is_quiet_where_a_wider_type_does_not_help(tmp_path, monkeypatch):
    with context(tmp_path, monkeypatch, WRONG_SCALE) as ctx:
        assert experiment("widen")(ctx, {"n": 256}) == {}


def test_a_narrow_accumulator_is_precision_loss_and_one_operation_out_of_range_is_overflow():
    """fp16-accumulation's sum passes 65504 only at its length (Inf, right in fp32 and at a quarter
    of the length): precision loss, though it shows as an overflow; softmax-no-max-subtraction's
    exp overflows at any length: overflow; bf16-accumulation's small error, gone in fp32: precision."""
    inf = [Finding("P202", "reference", "interpreter", "2 non-finite elements where the reference is finite")]
    seen = {"magnitude": "right scaled down by 16", "wider-dtype": "right in fp32"}
    d = diagnose(inf, {**seen, "length": "right at a quarter of cols"})
    assert d[0]["defect"] == "precision-loss" and d[0]["case"] == "fp16-accumulation", d
    assert diagnose(inf, seen)[0]["defect"] == "overflow"
    d = diagnose(wrong(), {"small-error": "relative error 0.03", "wider-dtype": "right in fp32",
                           "wrong-everywhere": "all wrong"})
    assert d[0]["defect"] == "precision-loss" and d[0]["case"] == "bf16-accumulation", d


# -- parts: which parts of a reduction reach the result ---------------------------------------------

FIRST_BLOCK_SUM = '''
@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)  # one block, and nothing walks on to the rest
    tl.store(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))

def launch(x):
    out = torch.empty(1)
    k[(1,)](x, out, x.numel(), BLOCK=64)
    return out

def make_inputs(*, device, gen, n=256):
    return {"x": torch.randn(n, generator=gen)}

def reference(x):
    return x.double().sum().reshape(1)
'''

NORM_PER_BLOCK = FIRST_BLOCK_SUM.replace(
    "offs = tl.arange(0, BLOCK)  # one block, and nothing walks on to the rest",
    "offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)").replace(
    "tl.store(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0), axis=0))",
    "x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)\n    tl.atomic_add(out_ptr, tl.sqrt(tl.sum(x * x)))").replace(
    "torch.empty(1)", "torch.zeros(1)").replace("k[(1,)]", "k[(triton.cdiv(x.numel(), 64),)]").replace(
    "x.double().sum().reshape(1)", "x.double().norm().reshape(1)")


@pytest.mark.parametrize("source, evidence", [(FIRST_BLOCK_SUM, "ignored-part"), (NORM_PER_BLOCK, "all-parts")])
def test_parts_tells_a_part_left_out_from_every_part_read(tmp_path, monkeypatch, source, evidence):
    with context(tmp_path, monkeypatch, source) as ctx:
        ev = experiment("parts")(ctx, {"n": 256})
    assert list(ev) == [evidence] and "n " in ev[evidence], ev


def test_parts_is_quiet_where_the_size_is_not_reduced_over(tmp_path, monkeypatch):
    with context(tmp_path, monkeypatch, WRONG_SCALE) as ctx:
        assert experiment("parts")(ctx, {"n": 256}) == {}


def test_a_reduction_right_with_one_block_reads_every_part_or_leaves_some_out():
    """nrm2-sqrt-per-block reads every block and adds their norms (wrong-combine); nrm2-global-sum
    never looks past its first block (partial-reduction); a causal mask aligned to the wrong corner
    also leaves keys out, but one program is not right there: no many-programs, not a reduction's."""
    many = {"many-programs": "right at n=1024; wrong at n=2048"}
    d = diagnose(wrong(), {**many, "all-parts": "every part is read"})
    assert d[0]["defect"] == "wrong-combine" and d[0]["case"] == "nrm2-sqrt-per-block", d
    assert diagnose(wrong(), {**many, "ignored-part": "after 1024 left out"})[0]["defect"] == "partial-reduction"
    race = [Finding("P302", "order", "interpreter", "program order 'reverse' against in order: differ")]
    for parts in ("ignored-part", "all-parts"):  # nrm2-race: the last program's store wins, the others' parts lost
        assert diagnose(race, {**many, parts: "seen"})[0]["defect"] == "store-race"
    d = diagnose(wrong(), {"ignored-part": "s_k after 128 left out", "equal-sizes": "right with s_q = s_k"})
    assert d[0]["defect"] == "mask-misalignment", d


# -- periodic: the same random numbers in every block -----------------------------------------------

def _dropout_fixed(old: str, new: str) -> str:
    text = (ROOT / "cases" / "dropout-repeated-mask" / "fixed.py").read_text()
    assert old in text
    return text.replace(old, new)


def test_periodic_sees_every_program_draw_the_same_random_numbers(tmp_path, monkeypatch):
    with context(tmp_path, monkeypatch, slug="dropout-repeated-mask") as ctx:
        ev = experiment("periodic")(ctx, {"n": 1025})
    assert "second block of 1024" in ev.get("block-repeat", ""), ev


def test_periodic_is_quiet_on_a_wrong_dropout_whose_numbers_differ_per_element(tmp_path, monkeypatch):
    """The fixed kernel's global offsets with dropped elements set to 1, not 0: wrong, not periodic."""
    source = _dropout_fixed("x / (1 - p), 0.0)", "x / (1 - p), 1.0)")
    with context(tmp_path, monkeypatch, source, slug="dropout-repeated-mask") as ctx:
        from harness.probe.experiments import outcome

        assert outcome(ctx, {"n": 1025})[0] == "wrong"
        assert experiment("periodic")(ctx, {"n": 1025}) == {}


def test_a_repeating_random_stream_is_rng_reuse():
    d = diagnose(wrong(), {"block-repeat": "second block a copy", "many-programs": "right at n=1024"})
    assert d[0]["defect"] == "rng-reuse" and d[0]["case"] == "dropout-repeated-mask", d


# -- intwrap: a signed integer that wraps -----------------------------------------------------------

PRODUCT = '''
@triton.jit
def k(out_ptr, a, b):
    tl.store(out_ptr + tl.arange(0, 4), tl.full([4], 0, tl.int64) + a * b)  # int32 * int32

def launch(a, b):
    out = torch.zeros(4, dtype=torch.int64)
    k[(1,)](out, a, b)
    return out

def make_inputs(*, device, gen, a=70000, b=70000):
    return {"a": a, "b": b}

def reference(a, b):
    return torch.full((4,), a * b, dtype=torch.int64)
'''


def test_intwrap_sees_a_product_past_int32_at_its_line(tmp_path, monkeypatch):
    with context(tmp_path, monkeypatch, PRODUCT) as ctx:
        ev = experiment("intwrap")(ctx, {"a": 70000, "b": 70000})
    line = (HEAD + PRODUCT).splitlines().index(next(x for x in PRODUCT.splitlines() if "a * b" in x)) + 1
    assert f"k.py:{line} (int32 * gives 605032704 for 4900000000)" in ev.get("debug-assert", ""), ev


def test_intwrap_is_quiet_without_a_wrap_and_inside_tl_rand(tmp_path, monkeypatch):
    """A sum instead of the product: wrong, no wrap. dropout-repeated-mask calls tl.rand, whose
    Philox rounds wrap by design: not the kernel's line."""
    with context(tmp_path, monkeypatch, PRODUCT.replace("a * b)  #", "a + b)  #")) as ctx:
        assert experiment("intwrap")(ctx, {"a": 70000, "b": 70000}) == {}
    with context(tmp_path, monkeypatch, slug="dropout-repeated-mask") as ctx:
        assert experiment("intwrap")(ctx, {"n": 1025}) == {}


def test_the_failing_sizes_are_run_once_for_the_bounds_check_the_wrap_check_and_the_values(tmp_path, monkeypatch):
    """The where, intwrap and values experiments read the one bounds- and wrap-checked run of the failing sizes
    that the experiments share (``outcome``), not a run of their own each: under the interpreter a run takes
    seconds, and three more of them left a 20 s probe's diagnosis without the experiment that names the
    defect."""
    from harness.probe.experiments import outcome

    counted = PRODUCT.replace("def launch(a, b):\n", "CALLS = []\n\ndef launch(a, b):\n    CALLS.append(1)\n")
    with context(tmp_path, monkeypatch, counted) as ctx:
        failing = {"a": 70000, "b": 70000}
        assert outcome(ctx, failing)[0] == "wrong"
        calls = ctx.target.launcher.__globals__["CALLS"]
        assert len(calls) == 1
        assert experiment("where")(ctx, failing) == {}
        assert "debug-assert" in experiment("intwrap")(ctx, failing)
        assert "wrong-values" in experiment("values")(ctx, failing)
        assert len(calls) == 1, f"{len(calls)} runs of the failing sizes"


def test_a_wrapped_random_counter_is_overflow():
    d = diagnose(wrong(), {"debug-assert": "a signed integer wraps at broken.py:39", "wrong-values": "378 wrong"})
    assert d[0]["defect"] == "overflow" and d[0]["case"] == "rng-offset-overflow", d


SLOW = """
import time


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def launch(x):
    out = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
    time.sleep(0.05 * x.numel())  # a run that takes longer the larger it is
    return out


def make_inputs(*, device, gen, batch=1, n=16):
    return {"x": torch.randn(batch * n, generator=gen).to(device)}


def reference(x):
    return x
"""


def test_an_experiments_run_stops_at_the_diagnosis_deadline_and_tells_nothing(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from harness.probe.budget import Budget, ManualClock
    from harness.probe.experiments import outcome

    with context(tmp_path, monkeypatch, SLOW) as ctx:
        clock = ManualClock()  # the kernel's sleep is the clock's: its runs take their time, not the machine's
        ctx.budget = Budget(clock=clock)
        monkeypatch.setitem(ctx.target.launcher.__globals__, "time", SimpleNamespace(sleep=clock.sleep))
        assert outcome(ctx, {"batch": 1, "n": 4})[0] == "right"  # 0.2 s: within the budget
        ctx.budget.deadline = clock.t + 0.5
        t0 = clock.t
        assert outcome(ctx, {"batch": 1, "n": 200}) == ("late", None)  # 10 s of sleep: stopped at the deadline
        assert clock.due is None and ctx.budget.timer.earliest() is None  # the run's limit taken away
        assert outcome(ctx, {"batch": 1, "n": 4})[0] == "right"  # made before: still answered
        assert outcome(ctx, {"batch": 1, "n": 5}) == ("late", None)  # past the deadline: not run at all


def test_the_tail_experiment_does_not_raise_a_size_to_many_times_the_work(tmp_path, monkeypatch):
    import harness.probe.experiments.tail as tail
    import harness.probe.tails as tails

    tried = []
    with context(tmp_path, monkeypatch, SLOW) as ctx:
        failing = {"batch": 1, "n": 70_000}
        monkeypatch.setattr(tails, "outcome", lambda c, sizes, *a: tried.append(dict(sizes))
                            or ("wrong" if sizes == failing else "right", None))
        monkeypatch.setattr(tails, "block_sizes", lambda c: [64])
        tail.run(ctx, failing)
    assert tried and all(s["batch"] == 1 for s in tried), tried  # batch 1 -> 64: 64 times the work
    assert {"batch": 1, "n": 69_952} in tried  # the block multiple below n: about the same work


def test_the_grain_experiment_tries_a_grain_coarser_than_the_kernels_blocks(tmp_path, monkeypatch):
    """A split of 1024 walked in blocks of 256 (only 256 is a constexpr): wrong at n=1 and at 256 (the split's
    other 768 entries padded), right at 1024, wrong again at 1025. The tail experiment, at the kernel's block,
    finds no tail; the grain experiment, run after every other, finds it at the multiples of 1024, and is
    not run where the tail was found."""
    import harness.probe.experiments.grain as grain
    import harness.probe.experiments.tail as tail
    import harness.probe.tails as tails
    from harness.probe.experiments import registry

    tried = []
    with context(tmp_path, monkeypatch, SLOW) as ctx:
        monkeypatch.setattr(tails, "outcome", lambda c, sizes, *a: tried.append(dict(sizes))
                            or ("right" if sizes["n"] % 1024 == 0 else "wrong", None))
        monkeypatch.setattr(tails, "block_sizes", lambda c: [256])
        assert tail.run(ctx, {"batch": 1, "n": 1}) == {}
        got = grain.run(ctx, {"batch": 1, "n": 1})
        assert got == {"tail": "wrong at n=1 and n=1025; right at n=1024 (multiples of 1024)"}, (got, tried)
        ctx.board.add_evidence(got)
        assert grain.run(ctx, {"batch": 1, "n": 1}) == {}
    assert {"batch": 1, "n": 256} in tried and {"batch": 1, "n": 512} in tried
    order = list(registry())
    assert all(order.index("grain") > order.index(n) for n in order if n not in ("grain", "runs"))  # runs: the GPU's


def test_the_tail_experiment_says_wrong_at_the_failing_sizes_only_where_it_saw_it(tmp_path, monkeypatch):
    """Shape fuzzing's failure may be a rounding error just over the tolerance that the same sizes
    with other inputs do not repeat: then there is no tail to speak of."""
    import harness.probe.experiments.tail as tail
    import harness.probe.tails as tails

    tried = []
    with context(tmp_path, monkeypatch, SLOW) as ctx:
        monkeypatch.setattr(tails, "outcome", lambda c, sizes, *a: tried.append(dict(sizes)) or ("right", None))
        monkeypatch.setattr(tails, "block_sizes", lambda c: [64])
        assert tail.run(ctx, {"batch": 1, "n": 1025}) == {}
    assert tried == [{"batch": 1, "n": 1025}]


# -- a match with a reference of zeros only is no evidence (outcome's "trivial") ------------------------------------

SCALED_COPY = '''
@triton.jit
def k(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    w = tl.load(w_ptr)
    tl.store(out_ptr + offs, (tl.load(x_ptr + offs, mask=offs < n, other=0.0) * w).to(tl.int8), mask=offs < n)

def launch(x, w):
    out = torch.empty(x.numel(), dtype=torch.int8, device=x.device)  # a narrower type than the result's
    k[(triton.cdiv(x.numel(), 64),)](x, w, out, x.numel(), BLOCK=64)
    return out

def make_inputs(*, device, gen, n=100, weight=1):
    x = torch.rand(n, generator=gen) * 3
    return {"x": x.to(device), "w": torch.full((1,), float(weight)).to(device)}

def reference(x, w):
    return x * w
'''


def test_a_match_with_a_reference_of_zeros_is_no_evidence_either_way(tmp_path, monkeypatch):
    """A board row (LightX2V's int8 output, the CPU at aa42c65) named padding-contamination first: the tail
    experiment saw the kernel right at m=256, where the seeded draw gave the one weight of n=1, k=1 the value 0, so
    every product, and the reference, was 0. Such a run says nothing of the formula: neither right nor wrong."""
    from harness.probe.experiments import outcome

    with context(tmp_path, monkeypatch, SCALED_COPY) as ctx:
        assert outcome(ctx, {"n": 100, "weight": 1})[0] == "wrong"  # the int8 store drops every fraction
        assert outcome(ctx, {"n": 100, "weight": 0})[0] == "trivial"
        assert outcome(ctx, {"n": 1, "weight": 0})[0] == "trivial"


def test_a_result_in_an_integer_type_that_cannot_hold_the_reference_is_named(tmp_path, monkeypatch):
    """The launcher allocates an int8 output for a float result (as LightX2V's int8 GEMM did by default): past int8's
    range the store wraps ("narrow-result", overflow); with values in range, only the fractions are dropped
    ("narrow-fraction"); a float result says nothing."""
    run = experiment("result-type")
    with context(tmp_path, monkeypatch, SCALED_COPY) as ctx:
        got = run(ctx, {"n": 100, "weight": 100})
        assert list(got) == ["narrow-result"] and "int8" in got["narrow-result"], got
        wraps = got
        got = run(ctx, {"n": 100, "weight": 1})
        assert list(got) == ["narrow-fraction"], got
    assert diagnose(wrong("at n=100: wrong"), wraps)[0]["defect"] == "overflow"
    assert diagnose(wrong("at n=100: wrong"), got)[0]["defect"] == "precision-loss"
    with context(tmp_path, monkeypatch, SCALED_COPY.replace("dtype=torch.int8", "dtype=torch.float32")
                 .replace(".to(tl.int8)", "")) as ctx:
        assert run(ctx, {"n": 100, "weight": 100}) == {}  # right: nothing to take apart


def test_a_result_type_too_narrow_is_read_at_the_defaults_too(tmp_path, monkeypatch):
    """LightX2V's int8 output at the CPU's later run (be81ade): shape fuzzing's smallest failing sizes (one product)
    held fractions only, and the defaults' products pass int8's range: the range passed is named (overflow)."""
    run = experiment("result-type")
    source = SCALED_COPY.replace("def make_inputs(*, device, gen, n=100, weight=1):",
                                 "def make_inputs(*, device, gen, n=100, weight=100):")
    with context(tmp_path, monkeypatch, source) as ctx:
        got = run(ctx, {"n": 100, "weight": 1})  # fractions only there; the defaults' weight 100 passes int8
        assert list(got) == ["narrow-result"], got


def test_an_experiments_run_in_which_the_probes_own_analysis_raised_tells_nothing(tmp_path, monkeypatch):
    """A run whose launch raised inside our own instrumentation (an analysis of the interpreter) is the probe's
    failure: the experiment reads it as telling nothing ("refused") and the detector's P000 note names it, never as
    the kernel's wrong run (which would be evidence for a defect class)."""
    from harness.probe.experiments import outcome
    from harness.run.analyses import races

    kept = races.MAX_RECORDED
    with context(tmp_path, monkeypatch, OVERWRITES) as ctx:
        monkeypatch.setattr(races, "MAX_RECORDED", "many")  # the race analysis's own comparison now raises
        seen, _ = outcome(ctx, {"n": 256}, race=True)
        assert seen == "refused" and len(ctx.failed) == 1, (seen, ctx.failed)
        assert "harness/run/analyses/races.py:" in ctx.failed[0]
        monkeypatch.setattr(races, "MAX_RECORDED", kept)
        assert outcome(ctx, {"n": 256}, race=True)[0] == "wrong"  # the kernel's own wrong run, as before
