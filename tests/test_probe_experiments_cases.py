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
    """A diagnosis Context on ``source`` (a probe file) or on a case's broken kernel, under the
    patched interpreter."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from harness.core.spec import load_spec
    from harness.probe.context import Context
    from harness.probe.target import load
    from harness.run.triton_compat import patched

    if slug:
        spec = load_spec(ROOT / "cases" / slug)
        args = (str(spec.path / "broken.py"), str(spec.path / "case.py"), spec.launcher)
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
        ctx.outcomes.clear()
        ctx.seen["failing"] = shrunk
        run(ctx)
    assert "autotune-reuse" in ctx.seen["evidence"], ctx.seen


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
