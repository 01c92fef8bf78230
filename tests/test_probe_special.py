"""The probe's special-value detector (issue #37): the default sizes with a row of zeros, a row of large
finite values, +inf, -inf and NaN put into the float inputs the reference reads, judged by IEEE semantics
against the float64 reference of the same inputs (harness/probe/detectors/special.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness import probe
from test_triton_compat import run_interpreted  # tests/ is on the path

# our own small kernels: a row softmax with and without the max subtracted, a row normalisation by the sum
# of magnitudes with and without a floor on it, a row kernel that does or does not read row 0 for every row
USER = """
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, SUB_MAX: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    x = tl.load(x_ptr + r * n_cols + c, mask=m, other=-float("inf"))
    if SUB_MAX:
        x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + r * n_cols + c, e / tl.sum(e, axis=0), mask=m)


def _rows(kernel, x, *args, **meta):  # one program per row of x, the result x's shape
    out = torch.empty_like(x)
    kernel[(x.shape[0],)](x, out, x.shape[1], *args, BLOCK=64, **meta)
    return out


def softmax_naive(x):
    return _rows(softmax_kernel, x, SUB_MAX=False)


def softmax_stable(x):
    return _rows(softmax_kernel, x, SUB_MAX=True)


@triton.jit
def rownorm_kernel(x_ptr, out_ptr, n_cols, eps, EPS: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    x = tl.load(x_ptr + r * n_cols + c, mask=m, other=0.0)
    s = tl.sum(tl.abs(x), axis=0)
    if EPS:
        s = tl.maximum(s, eps)
    tl.store(out_ptr + r * n_cols + c, x / s, mask=m)


def rownorm_no_eps(x):
    return _rows(rownorm_kernel, x, 1e-12, EPS=False)


def rownorm_eps(x):
    return _rows(rownorm_kernel, x, 1e-12, EPS=True)


@triton.jit
def rows_kernel(x_ptr, out_ptr, n_cols, LEAK: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    x = tl.load(x_ptr + r * n_cols + c, mask=m, other=0.0)
    if LEAK:  # row 0 read by every row, its sum times 0 added: 0 for finite rows, NaN once row 0 holds one
        x = x + 0.0 * tl.sum(tl.load(x_ptr + c, mask=m, other=0.0), axis=0)
    tl.store(out_ptr + r * n_cols + c, x * 2.0, mask=m)


def double_leaky(x):
    return _rows(rows_kernel, x, LEAK=True)


def double(x):
    return _rows(rows_kernel, x, LEAK=False)


@triton.jit
def sumsq_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + r * n_cols + c, mask=c < n_cols, other=0.0)
    tl.store(out_ptr + r, tl.sum(x * x, axis=0))


def sumsq(x):  # a plain float32 sum of squares: it overflows at large values, as torch's does
    out = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
    sumsq_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=64)
    return out


def make_inputs(*, device, gen, rows=6, cols=40):
    return {"x": torch.randn(rows, cols, generator=gen).to(device), "idx": torch.arange(rows, device=device)}
"""

REFERENCES = {
    "softmax": "def reference(x):\n    return torch.softmax(x.double(), dim=-1)\n",
    # the reference guards a zero row (its clamp), as F.normalize does
    "rownorm": "def reference(x):\n    x = x.double()\n    return x / x.abs().sum(-1, keepdim=True).clamp_min(1e-12)\n",
    "rows": "def reference(x):\n    return x.double() * 2\n",
    "sumsq": "def reference(x):\n    return x.double().pow(2).sum(-1)\n",
    # clamps its input first (as a quantizer clamps to its format's range): finite at an inf input
    "clamped": "def reference(x):\n    x = x.double().clamp(-1e4, 1e4)\n"
               "    return x / x.abs().sum(-1, keepdim=True).clamp_min(1e-12)\n",
}


@pytest.fixture
def user(tmp_path):
    (tmp_path / "user_kernels.py").write_text(textwrap.dedent(USER))
    out = {}
    for name, ref in REFERENCES.items():
        path = tmp_path / f"user_{name}.py"
        path.write_text(f"import torch\nfrom user_kernels import *  # noqa: F401,F403\n\n\n{ref}")
        out[name] = str(path)
    return out


def _special(path, launcher):
    return probe(path, launcher=launcher, backends=["interpreter"], detectors=["special"], jobs=1)


def test_a_softmax_without_the_max_subtracted_overflows_at_large_finite_values_and_is_named(user):
    r = _special(user["softmax"], "softmax_naive")
    found = r.by_code("P207")
    assert found and found[0].severity == "error", r.text()
    large = [f for f in found if f.message.startswith("with a row of large finite values in 'x' (x[0, :]")]
    assert large and "NaN/Inf where the float64 reference is finite" in large[0].message, [f.message for f in found]
    first = r.diagnosis[0]
    assert (first["defect"], first["case"]) == ("overflow", "softmax-no-max-subtraction"), r.diagnosis
    assert not r.ok


def test_a_division_by_a_zero_sum_the_reference_guards_is_an_error_named_overflow(user):
    r = _special(user["rownorm"], "rownorm_no_eps")
    found = r.by_code("P207")
    assert [f.severity for f in found] == ["error"], r.text()
    assert found[0].message.startswith("with a row of zeros in 'x' (x[0, :]) at rows=6, cols=40: 40 of 240 result "
                                       "elements NaN/Inf"), found[0].message
    assert "first output[0,0] = nan (reference 0)" in found[0].message
    assert r.diagnosis[0]["defect"] == "overflow", r.diagnosis


def test_a_nan_in_row_0_that_leaks_into_the_other_rows_is_an_error(user):
    r = _special(user["rows"], "double_leaky")
    errors = [f for f in r.by_code("P207") if f.severity == "error"]
    assert errors, r.text()
    assert any(f.message.startswith("with NaN in one element in 'x' (x[0, 20])") and "239 of 240" in f.message
               for f in errors), [f.message for f in errors]  # the reference is NaN at that element alone


@pytest.mark.parametrize("which,launcher", [("softmax", "softmax_stable"), ("rownorm", "rownorm_eps"),
                                            ("rows", "double")])
def test_the_correct_twins_are_quiet(user, which, launcher):
    r = _special(user[which], launcher)
    assert not r.problems, r.text()
    assert [d for d, st in ((d, st) for _, d, _, st in r.ran) if d == "special" and st.startswith("done")], r.ran


def test_an_overflow_the_references_own_formula_has_in_float32_is_not_the_kernels_fault(user):
    """sum(x * x) in float32 overflows at a quarter of sqrt(max) with 40 columns, the kernel's as the
    reference's formula evaluated in float32: no correct float32 kernel does better (quiet)."""
    r = _special(user["sumsq"], "sumsq")
    assert not r.problems, r.text()


def test_the_narrowed_reference_keeps_float64_tensors_in_float32():
    import torch

    from harness.probe.detectors import special

    class T:
        @staticmethod
        def reference(x):
            y = x.double()
            assert y.dtype == torch.float32  # the mode kept it
            return y.pow(2).sum(-1)

    big = torch.full((1, 4), 2.0 ** 64)
    got = special.in_kernel_formats(T, {"x": big})
    assert got.dtype == torch.float64 and torch.isinf(got).all()  # 2**128 overflows float32
    assert torch.isfinite(big.double().pow(2).sum(-1)).all()  # where float64 does not


def test_special_values_go_where_the_rule_says():
    import torch

    from harness.probe.detectors import special

    x = {"x": torch.ones(3, 5), "v": torch.ones(4), "i": torch.arange(3)}
    assert special._place(x, "x", "zero") == "x[0, :]" and x["x"][0].abs().sum() == 0 and x["x"][1:].eq(1).all()
    assert special._place(x, "v", "nan") == "v[2]" and torch.isnan(x["v"]).sum() == 1
    big = 0.25 * torch.finfo(torch.float32).max ** 0.5
    y = {"x": torch.randn(2, 8)}
    assert "largest magnitude" in special._place(y, "x", "large")
    assert float(y["x"][0].abs().max()) == pytest.approx(big, rel=1e-6) and y["x"][1].abs().max() < 10
    assert special._place({"x": torch.ones(3).to(torch.float8_e4m3fn)}, "x", "+inf") is None  # it has no inf
    # the product of two fits the input's own format (an fp16 kernel may compute in fp16)
    assert special.large_value(torch.float16) == pytest.approx(0.25 * 65504 ** 0.5)
    assert special.large_value(torch.bfloat16) == pytest.approx(0.25 * torch.finfo(torch.bfloat16).max ** 0.5)
    assert special.large_value(torch.float64) == pytest.approx(0.25 * torch.finfo(torch.float64).max ** 0.5)
    assert special.formats_of({"x": y["x"].half(), "w": y["x"]}) == [torch.float32, torch.float16]
    assert special.formats_of({"x": y["x"].double()}) == []


def test_only_float_inputs_the_reference_reads_are_candidates():
    """The largest of any shape, then matrices only (a vector beside the data is a weight or a codebook); never
    an integer tensor, one the reference does not read, or (a reference taking **kwargs) one the launch wrote."""
    import torch

    from harness.probe.detectors import special

    class T:
        @staticmethod
        def reference(x, w, k, idx):
            return x

    inputs = {"x": torch.ones(4, 4), "w": torch.ones(4), "k": torch.ones(2, 3), "idx": torch.arange(4),
              "out": torch.empty(4, 4)}
    assert special.candidates(T, inputs) == ["x", "k"]
    assert special.candidates(T, {"w": torch.ones(8), "k": torch.ones(2, 3)}) == ["w", "k"]

    class K:
        @staticmethod
        def reference(**kw):
            return kw["x"]

    assert special.candidates(K, inputs, changed=["out"]) == ["x", "k"]
    assert special.plan(["x", "k"]) == [("x", "zero"), ("x", "large"), ("k", "large"), ("k", "zero"), ("x", "nan"),
                                        ("x", "+inf"), ("x", "-inf"), ("k", "nan")]
    assert len(special.plan(list("abcdef"))) == special.MAX_RUNS


def test_severity_by_ieee_semantics():
    """NaN where the reference is finite: an error. Finite values off beyond the floor: an error at a zero row,
    a warning at an Inf input, information at large values and where the reference computes a NaN on its
    way. Finite where the reference is NaN (a max that drops a NaN: IEEE 754-2008 maxNum) and NaN for Inf:
    information (a note's text)."""
    import torch

    from harness.probe.context import Context
    from harness.probe.detectors import special
    from harness.probe.execute import Call

    class T:
        tolerance = None
        sizes = {"n": 4}

        @staticmethod
        def tolerance_for(dtype, ref=None):
            return 1e-4, 1e-5

    ctx = Context(T, "interpreter", 0, "special")
    ref = torch.tensor([1.0, float("nan"), float("inf"), 2.0], dtype=torch.float64)

    def judge(out, variant="+inf", r32=None, nan_met=False):
        c = Call(out=torch.tensor(out, dtype=torch.float32), ref=ref, cmp={"close": False})
        return special._judge(ctx, c, ref, variant, "X", lambda: [r32], lambda: nan_met)

    nan, inf = float("nan"), float("inf")
    assert judge([1.0, nan, inf, 2.0]) is None  # the same, NaN for NaN
    assert isinstance(judge([1.0, 5.0, inf, 2.0]), str)  # a NaN dropped: a note's text
    assert isinstance(judge([1.0, nan, nan, 2.0]), str)  # NaN for Inf: a note's text
    f = judge([1.0, nan, inf, nan], "zero")
    assert f.severity == "error" and "first output[3] = nan (reference 2)" in f.message, f.message
    assert judge([1.0, nan, inf, nan], "nan", nan_met=True).severity == "error"  # NaN where finite, whatever met
    off = judge([1.0, nan, inf, 3.0], "zero")
    assert off.severity == "error" and "the worst output[3] = 3 (reference 2)" in off.message, off.message
    assert judge([1.0, nan, inf, 3.0], "+inf").severity == "warning"
    assert isinstance(judge([1.0, nan, inf, 3.0], "large"), str)
    assert isinstance(judge([1.0, nan, inf, 3.0], "zero", nan_met=True), str)  # the reference's own 0/0
    # the reference's own formula in float32 gives Inf there too: not the kernel's fault
    r32 = torch.tensor([1.0, nan, inf, inf], dtype=torch.float64)
    assert judge([1.0, nan, inf, inf], "large", r32=r32) is None
    assert judge([1.0, nan, inf, inf], "large").severity == "error"
    # an fp16 output cannot hold 1e5: Inf is its correctly rounded value (IEEE overflow in the output's format)
    big = torch.tensor([1.0, 1e5], dtype=torch.float64)
    c = Call(out=torch.tensor([1.0, inf], dtype=torch.float16), ref=big, cmp={"close": False})
    assert special._judge(ctx, c, big, "large", "X", lambda: [], lambda: False) is None
    c = Call(out=torch.tensor([1.0, inf], dtype=torch.float32), ref=big, cmp={"close": False})
    assert special._judge(ctx, c, big, "large", "X", lambda: [], lambda: False).severity == "error"


DEADLINE_RUN = r"""
import json
from pathlib import Path
from harness.probe.budget import Budget, ManualClock
from harness.probe.context import Context
from harness.probe.detectors import special
from harness.probe.target import load

path = PATH
clock = ManualClock()
t = load(path, None, "softmax_naive", "interpreter", str(Path(path).parent))
ctx = Context(t, "interpreter", 0, "special", budget=Budget(clock=clock))
ctx.budget.deadline = clock.t + 2.5
plain = ctx.call
calls = []
ctx.call = lambda *a, **k: (clock.sleep(1.0), calls.append(1), plain(*a, **k))[2]  # each launch takes a second
found = special.run(ctx)  # the plain run, the zero row, the large row; then past the deadline
ctx.board.special_now = found[:1]
kept = special.partial(ctx) == found[:1] and ctx.board.special_now is None
print("RESULT " + json.dumps({"calls": len(calls), "found": [[f.code, f.severity, f.message] for f in found], "kept": kept}))
"""


def test_it_stops_at_its_deadline_with_a_note(user):
    """On a fake clock, in a process of its own (Triton's in-process state left by other tests stays out)."""
    got = run_interpreted(DEADLINE_RUN.replace("PATH", repr(user["softmax"]), 1))
    found = got["found"]
    assert got["calls"] == 3 and [f[0] for f in found] == ["P207", "P000"], found
    assert found[0][2].startswith("with a row of large finite values") and found[1][1] == "info"
    assert got["kept"]


@pytest.mark.parametrize("message,defect,case", [
    ("with a row of large finite values in 'x' (x[0, :], largest magnitude 4.61e+18) at rows=6, cols=40: 23 of 240 "
     "result elements NaN/Inf where the float64 reference is finite, first output[0,4] = nan (reference 0)",
     "overflow", "softmax-no-max-subtraction"),
    ("with a row of zeros in 'x' (x[0, :]) at rows=6, cols=40: 40 of 240 result elements NaN/Inf where the float64 "
     "reference is finite, first output[0,0] = nan (reference 0)", "overflow", "softmax-no-max-subtraction"),
    # values the result should not depend on get in: the casebook's padding-contamination (nonfinite-input)
    ("with NaN in one element in 'x' (x[0, 20]) at rows=6, cols=40: 239 of 240 result elements NaN/Inf where the "
     "float64 reference is finite, first output[0,0] = nan (reference -2.25)", "padding-contamination", None),
])
def test_the_diagnosis_names_the_class_the_special_value_points_to(message, defect, case):
    from harness.probe.diagnosis import diagnose, evidence_of
    from harness.probe.findings import Finding

    f = Finding("P207", "special", "interpreter", message, severity="error")
    assert "nonfinite" in evidence_of([f])
    first = diagnose([f])[0]
    assert (first["defect"], first["case"]) == (defect, case), diagnose([f])
    note = Finding("P207", "special", "interpreter", "information: " + message, severity="info")
    assert evidence_of([note]) == {}


def test_nan_where_the_result_depends_on_an_inf_put_in_is_a_warning_not_an_error(user):
    """rownorm_eps divides by sum|x|: with +inf in x[0, 20] the sum is inf and inf / inf is NaN there, where a
    reference that clamps its input first is finite. That element depends on the value put in, and IEEE lets
    equal formulas differ around an Inf: a warning. A NaN where the reference does not depend on it (the
    leaking kernel above) stays an error."""
    r = _special(user["clamped"], "rownorm_eps")
    found = r.by_code("P207")
    assert not [f for f in found if f.severity == "error"], r.text()
    assert any(f.severity == "warning" and f.message.startswith("with +inf in one element in 'x' (x[0, 20])")
               and "depend on the non-finite value" in f.message for f in found), r.text()
