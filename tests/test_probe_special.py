"""The probe's special-value detector (issue #37): the default sizes with a row of zeros, a row of large
finite values, +inf, -inf and NaN put into the float inputs the reference reads, judged by IEEE semantics
against the float64 reference of the same inputs (harness/probe/detectors/special.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

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
def load_row(x_ptr, n_cols, BLOCK: tl.constexpr):  # this program's row: its columns, their mask, its values
    c = tl.arange(0, BLOCK)
    return c, c < n_cols, tl.load(x_ptr + tl.program_id(0) * n_cols + c, mask=c < n_cols, other=0.0)


@triton.jit
def fakequant_kernel(x_ptr, out_ptr, n_cols, eps, LEAK: tl.constexpr, BLOCK: tl.constexpr):
    # an int8-style quantize-dequantize with the row's absmax as its scale: an Inf in the row makes the scale
    # Inf, x / scale 0 and 0 * scale NaN for every element of the row, where an unquantized reference is finite
    c, m, x = load_row(x_ptr, n_cols, BLOCK)
    scale = tl.maximum(tl.max(tl.abs(x), axis=0), eps) / 127.0  # eps = 0: no floor
    if LEAK:  # the padding lanes read row 0 (a wrong index) times 0: 0 for a finite row 0, NaN for every row else
        pad = tl.load(x_ptr + (c % n_cols), mask=c >= n_cols, other=0.0)
        scale = scale + 0.0 * tl.sum(pad, axis=0)
    q = tl.floor(x / scale + 0.5)
    tl.store(out_ptr + tl.program_id(0) * n_cols + c, q * scale, mask=m)


def fakequant(x):
    return _rows(fakequant_kernel, x, 1e-12, LEAK=False)


def fakequant_no_eps(x):  # a zero row: 0 / 0
    return _rows(fakequant_kernel, x, 0.0, LEAK=False)


def fakequant_leaky(x):
    return _rows(fakequant_kernel, x, 1e-12, LEAK=True)


@triton.jit
def softplus_kernel(x_ptr, out_ptr, n_cols, THRESHOLD: tl.constexpr, BLOCK: tl.constexpr):
    c, m, x = load_row(x_ptr, n_cols, BLOCK)
    y = tl.log(1.0 + tl.exp(x))
    if THRESHOLD:  # as torch's softplus: x itself above 20, where log(1 + exp(x)) = x in float32
        y = tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(tl.minimum(x, 20.0))))
    tl.store(out_ptr + tl.program_id(0) * n_cols + c, y, mask=m)


def softplus_naive(x):
    return _rows(softplus_kernel, x, THRESHOLD=False)


def softplus(x):
    return _rows(softplus_kernel, x, THRESHOLD=True)


@triton.jit
def l2norm_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    # each row's Euclidean norm, sqrt(x . x): the dot product in float32, as any plain kernel forms it
    c, m, x = load_row(x_ptr, n_cols, BLOCK)
    tl.store(out_ptr + tl.program_id(0), tl.sqrt(tl.sum(x * x, axis=0)))


def l2norm(x):
    out = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
    l2norm_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


@triton.jit
def logsoftmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    # log(softmax(x)) as two steps: the max subtracted (no overflow), then the log of each probability, which
    # is -inf where the probability underflowed (below about 1e-45; a GPU's flush-to-zero from 1.2e-38 on)
    c, m, x = load_row(x_ptr, n_cols, BLOCK)
    e = tl.exp(x - tl.max(tl.where(m, x, -float("inf")), axis=0))
    e = tl.where(m, e, 0.0)
    tl.store(out_ptr + tl.program_id(0) * n_cols + c, tl.log(e / tl.sum(e, axis=0)), mask=m)


def logsoftmax(x):
    return _rows(logsoftmax_kernel, x)


@triton.jit
def logsoftmax_ftz_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    # the same, with every subnormal intermediate flushed to zero as a GPU's float32 may (flush-to-zero): the
    # interpreter's numpy keeps subnormals, so this is what a GPU's run of logsoftmax_kernel can give, here
    tiny = 1.1754943508222875e-38
    c, m, x = load_row(x_ptr, n_cols, BLOCK)
    e = tl.exp(x - tl.max(tl.where(m, x, -float("inf")), axis=0))
    e = tl.where(m & (e >= tiny), e, 0.0)
    p = e / tl.sum(e, axis=0)
    tl.store(out_ptr + tl.program_id(0) * n_cols + c, tl.log(tl.where(p >= tiny, p, 0.0)), mask=m)


def logsoftmax_ftz(x):
    return _rows(logsoftmax_ftz_kernel, x)


@triton.jit
def rowscale_kernel(x_ptr, s_ptr, out_ptr, n_cols, s_cols, ROW0: tl.constexpr, BLOCK: tl.constexpr):
    # each row of x times its row's scale, s[r, 0]; ROW0: every row's scale read from row 0 (no row offset)
    c, m, x = load_row(x_ptr, n_cols, BLOCK)
    s = tl.load(s_ptr + tl.program_id(0) * s_cols * (1 - ROW0))
    tl.store(out_ptr + tl.program_id(0) * n_cols + c, x * s, mask=m)


def rowscale_row0(x, s):
    out = torch.empty_like(x)
    rowscale_kernel[(x.shape[0],)](x, s, out, x.shape[1], s.shape[1], ROW0=1, BLOCK=64)
    return out


def rowscale(x, s):
    out = torch.empty_like(x)
    rowscale_kernel[(x.shape[0],)](x, s, out, x.shape[1], s.shape[1], ROW0=0, BLOCK=64)
    return out


@triton.jit
def softplus_grad_kernel(x_ptr, g_ptr, out_ptr, n_cols, TYPO: tl.constexpr, BLOCK: tl.constexpr):
    # g times softplus(x), softplus linear past its threshold of 20: the typo's linear branch picks g, the other
    # operand, in place of x (as mamba's _chunk_cumsum_bwd_kernel before its PR 713 did)
    c, m, x = load_row(x_ptr, n_cols, BLOCK)
    g = tl.load(g_ptr + tl.program_id(0) * n_cols + c, mask=m, other=0.0)
    sp = tl.log(1.0 + tl.exp(tl.minimum(x, 20.0)))
    if TYPO:
        sp = tl.where(x <= 20.0, sp, g)
    else:
        sp = tl.where(x <= 20.0, sp, x)
    tl.store(out_ptr + tl.program_id(0) * n_cols + c, g * sp, mask=m)


def _softplus_grad(x, g, typo):
    out = torch.empty_like(x)
    softplus_grad_kernel[(x.shape[0],)](x, g, out, x.shape[1], TYPO=typo, BLOCK=triton.next_power_of_2(x.shape[1]))
    return out


def softplus_grad_typo(x, g):
    return _softplus_grad(x, g, True)


def softplus_grad(x, g):
    return _softplus_grad(x, g, False)


@triton.jit
def argmax_kernel(x_ptr, out_ptr, n_cols, ZERO_PAD: tl.constexpr, BLOCK: tl.constexpr):
    # the index of each row's largest value; the padded lanes past n_cols read as 0 (other=0.0, as trident's
    # argmax's padding_option="zero" before its fix) or as -inf
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    if ZERO_PAD:
        x = tl.load(x_ptr + r * n_cols + c, mask=c < n_cols, other=0.0)
    else:
        x = tl.load(x_ptr + r * n_cols + c, mask=c < n_cols, other=-float("inf"))
    tl.store(out_ptr + r, tl.argmax(x, axis=0))


def _argmax(x, zero_pad):
    out = torch.empty(x.shape[0], dtype=torch.int32, device=x.device)
    argmax_kernel[(x.shape[0],)](x, out, x.shape[1], ZERO_PAD=zero_pad, BLOCK=64)
    return out


def argmax_zero_padded(x):
    return _argmax(x, True)


def argmax_inf_padded(x):
    return _argmax(x, False)


@triton.jit
def centered_kernel(x_ptr, out_ptr, n_rows, n_cols, n_real, BY_PRODUCT: tl.constexpr, BR: tl.constexpr,
                    BC: tl.constexpr):
    # the first n_real rows less their column means; the rows past them (the output's padding) 0: masked by a
    # product with 0 (as attention backwards mask P), or with tl.where
    r = tl.arange(0, BR)[:, None]
    c = tl.arange(0, BC)[None, :]
    m = (r < n_rows) & (c < n_cols)
    x = tl.load(x_ptr + r * n_cols + c, mask=m, other=0.0)
    real = r < n_real
    centered = x - (tl.sum(tl.where(real & m, x, 0.0), axis=0) / n_real)[None, :]
    if BY_PRODUCT:
        y = real.to(tl.float32) * centered
    else:
        y = tl.where(real, centered, 0.0)
    tl.store(out_ptr + r * n_cols + c, y, mask=m)


def _centered(x, n_real, by_product):
    out = torch.empty_like(x)
    centered_kernel[(1,)](x, out, x.shape[0], x.shape[1], n_real, BY_PRODUCT=by_product, BR=8, BC=64)
    return out


def centered_by_product(x, n_real):
    return _centered(x, n_real, True)


def centered_by_where(x, n_real):
    return _centered(x, n_real, False)


def make_inputs(*, device, gen, rows=6, cols=40):
    return {"x": torch.randn(rows, cols, generator=gen).to(device), "idx": torch.arange(rows, device=device)}
"""

REFERENCES = {
    "softmax": "def reference(x):\n    return torch.softmax(x.double(), dim=-1)\n",
    # the reference guards a zero row (its clamp), as F.normalize does
    "rownorm": "def reference(x):\n    x = x.double()\n    return x / x.abs().sum(-1, keepdim=True).clamp_min(1e-12)\n",
    "rows": "def reference(x):\n    return x.double() * 2\n",
    "argmax": "def reference(x):\n    return torch.argmax(x.double(), dim=-1)\n",
    # the rows past n_real are the output's padding: 0 whatever x holds
    "centered": "def reference(x, n_real):\n    x = x.double()\n    real = (torch.arange(x.shape[0]) < n_real)[:, None]\n"
                "    mean = x[:n_real].mean(0, keepdim=True)\n    return torch.where(real, x - mean, 0.0)\n\n\n"
                "def make_inputs(*, device, gen, rows=8, cols=40, n_real=5):\n"
                "    return {'x': torch.randn(rows, cols, generator=gen).to(device), 'n_real': n_real}\n",
    # clamps its input first (as a quantizer clamps to its format's range): finite at an inf input
    "clamped": "def reference(x):\n    x = x.double().clamp(-1e4, 1e4)\n"
               "    return x / x.abs().sum(-1, keepdim=True).clamp_min(1e-12)\n",
    # unquantized: the kernel's int8 roundtrip is within half a step (the row's absmax / 254, below 0.02 here)
    "fakequant": "TOLERANCE = {'rtol': 0.0, 'atol': 0.03}\n\n\ndef reference(x):\n    return x.double()\n",
    "softplus": "def reference(x):\n    return torch.nn.functional.softplus(x.double())\n",
    # row 0 evenly spread, so that the large row's x - max falls every 8.4 from 0 to -532: -92.9 and -101.3 give
    # probabilities that float32 holds only as subnormals, -110 on one that underflows to 0 in any float32
    "logsoftmax": "def reference(x):\n    return torch.log_softmax(x.double(), dim=-1)\n\n\n"
                  "def make_inputs(*, device, gen, rows=4, cols=64):\n"
                  "    x = torch.randn(rows, cols, generator=gen)\n    x[0] = torch.linspace(-1, 1, cols)\n"
                  "    return {'x': x.to(device)}\n",
    # the same formula as the kernel's: log of the softmax, where float32 loses what the kernel loses
    "logsoftmax_naive_ref": "def reference(x):\n    return torch.log(torch.softmax(x.double(), dim=-1))\n\n\n"
                            "def make_inputs(*, device, gen, rows=4, cols=64):\n"
                            "    x = torch.randn(rows, cols, generator=gen)\n    x[0] = torch.linspace(-1, 1, cols)\n"
                            "    return {'x': x.to(device)}\n",
    # a scale per row, the same in every row as made (a loss weight of 1/2 for every token): a kernel that reads
    # row 0's scale for every row is right at the defaults, wrong once one row's scale differs
    "rowscale": "def reference(x, s):\n    return x.double() * s.double()[:, :1]\n\n\n"
                "def make_inputs(*, device, gen, rows=6, cols=40):\n"
                "    return {'x': torch.randn(rows, cols, generator=gen).to(device),\n"
                "            's': torch.full((rows, 2), 0.5).to(device)}\n",
    # a pre-activation over four heads whose first row is all negative (a short last dim: one sign is likely), the
    # gradient beside it; positive pre-activations elsewhere in the tensor
    "softplus_grad": "def reference(x, g):\n    return torch.nn.functional.softplus(x.double()) * g.double()\n\n\n"
                     "def make_inputs(*, device, gen, rows=8, cols=4):\n"
                     "    x = torch.randn(rows, cols, generator=gen)\n    x[0] = -x[0].abs() - 0.1\n"
                     "    return {'x': x.to(device), 'g': torch.randn(rows, cols, generator=gen).to(device)}\n",
    # the reference's own formula has no threshold: in float32 it overflows as the kernel does
    "softplus_naive_ref": "def reference(x):\n    return torch.log1p(torch.exp(x.double()))\n",
    # the norm of the row scaled by its absmax first: its own formula never overflows, in float32 either
    # (rows of 256: at the old large row, 4.6e18, their sum of squares passed float32's 3.4e38)
    "l2norm": "def reference(x):\n    x = x.double()\n    m = x.abs().amax(-1, keepdim=True).clamp_min(1e-300)\n"
              "    return (m * (x / m).pow(2).sum(-1, keepdim=True).sqrt()).squeeze(-1)\n\n\n"
              "def make_inputs(*, device, gen, rows=4, cols=256):\n"
              "    return {'x': torch.randn(rows, cols, generator=gen).to(device)}\n",
}


def _write_user(folder: Path) -> dict:
    """Our kernels and a probe file per reference written into ``folder``: {reference's name: its file}."""
    (folder / "user_kernels.py").write_text(textwrap.dedent(USER))
    out = {}
    for name, ref in REFERENCES.items():
        path = folder / f"user_{name}.py"
        path.write_text(f"import torch\nfrom user_kernels import *  # noqa: F401,F403\n\n\n{ref}")
        out[name] = str(path)
    return out


@pytest.fixture
def user(tmp_path):
    return _write_user(tmp_path)


def _special(path, launcher):
    # no budget: what it finds must not depend on the machine's speed (under four CPU-bound processes on two
    # cores, the 60 s budget was spent before special's process started: 'not run')
    return probe(path, launcher=launcher, backends=["interpreter"], detectors=["special"], jobs=1, budget=0)


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
    # the rows other than row 0: neither the reference nor the kernel's result there moves with x[0, 20] (row 0's
    # own elements do in the kernel, through the row sum it reads: IEEE propagation along a path it has)
    assert any(f.message.startswith("with NaN in one element in 'x' (x[0, 20])") and "200 of 240" in f.message
               and "it leaked" in f.message for f in errors), [f.message for f in errors]


@pytest.mark.parametrize("which,launcher", [("softmax", "softmax_stable"), ("rownorm", "rownorm_eps"),
                                            ("rows", "double")])
def test_the_correct_twins_are_quiet(user, which, launcher):
    r = _special(user[which], launcher)
    assert not r.problems, r.text()
    assert [d for d, st in ((d, st) for _, d, _, st in r.ran) if d == "special" and st.startswith("done")], r.ran


def test_an_overflow_the_references_own_formula_has_in_float32_is_not_the_kernels_fault(user):
    """A softplus without its threshold against a reference written the same way, log1p(exp(x)): at the large
    row exp overflows float32 in both (the reference's formula evaluated in float32 is Inf there), where the
    float64 reference is finite: no float32 kernel of that formula does better (quiet). The excuse covers the
    large row as every special value."""
    r = _special(user["softplus_naive_ref"], "softplus_naive")
    assert not r.problems, r.text()
    assert [d for d, st in ((d, st) for _, d, _, st in r.ran) if d == "special" and st.startswith("done")], r.ran


def test_a_softplus_without_its_threshold_overflows_at_the_large_row_and_is_an_error(user):
    """exp(x) overflows float32 above 88.7: the large row (266 at its largest) gives Inf where torch's softplus,
    in float64 and in float32 alike, is finite (its threshold). The thresholded twin is quiet."""
    r = _special(user["softplus"], "softplus_naive")
    found = [f for f in r.by_code("P207") if f.severity == "error"]
    assert any(f.message.startswith("with a row of large finite values in 'x' (x[0, :], largest magnitude 266)")
               and "NaN/Inf where the float64 reference is finite" in f.message for f in found), r.text()
    assert r.diagnosis[0]["defect"] == "overflow", r.diagnosis
    quiet = _special(user["softplus"], "softplus")
    assert not quiet.problems, quiet.text()


def test_a_dot_product_over_a_wide_row_is_quiet_at_the_large_row(user):
    """A plain float32 row norm, sqrt(x . x), over rows of 256 against a reference that scales the row by its
    absmax first (its own formula never overflows, in float32 either): at the large row's magnitude the dot
    product fits float32 with room to spare, so a correct kernel is quiet (at 4.6e18, the magnitude before,
    it overflowed to Inf and was called wrong)."""
    r = _special(user["l2norm"], "l2norm")
    assert not r.problems, r.text()
    assert [d for d, st in ((d, st) for _, d, _, st in r.ran) if d == "special" and st.startswith("done")], r.ran


def test_a_quantizer_whose_scale_is_its_rows_absmax_carries_an_inf_into_its_row_a_warning(user):
    """An int8-style quantize-dequantize whose scale is its row's absmax: +inf (or -inf) in x[0, 20] makes the
    scale Inf and every element of row 0 NaN (0 * inf), where the unquantized reference is finite and does not
    depend on x[0, 20]. The kernel's own row 0 does (it moves when x[0, 20] is given a larger finite value):
    IEEE propagation through a shared row value, a warning, never an error; the diagnosis takes no defect
    from it."""
    r = _special(user["fakequant"], "fakequant")
    found = r.by_code("P207")
    assert not [f for f in found if f.severity == "error"], r.text()
    warned = [f for f in found if f.severity == "warning" and f.message.startswith("with +inf in one element in 'x' "
                                                                                   "(x[0, 20])")]
    assert warned and "propagates through a shared row/group value such as a scale" in warned[0].message, r.text()
    assert "39 of 240 result elements NaN/Inf" in warned[0].message, warned[0].message  # row 0 but x[0, 20] itself
    assert not [d for d in r.diagnosis if d.get("defect")], r.diagnosis
    assert r.ok


@pytest.mark.parametrize("launcher,start,count", [
    # its padding lanes read row 0 times 0: the NaN in every other row, which neither depends on x[0, 20]
    ("fakequant_leaky", "with NaN in one element in 'x' (x[0, 20])", "200 of 240"),
    # no floor on the scale: a row of zeros gives 0 / 0 where the reference is 0 (a finite value put in)
    ("fakequant_no_eps", "with a row of zeros in 'x' (x[0, :])", "40 of 240"),
])
def test_the_quantizers_broken_twins_stay_errors(user, launcher, start, count):
    r = _special(user["fakequant"], launcher)
    errors = [f for f in r.by_code("P207") if f.severity == "error"]
    assert any(f.message.startswith(start) and f"{count} result elements NaN/Inf" in f.message for f in errors), \
        r.text()
    assert not r.ok


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


def test_the_gpu_side_is_one_switch():
    from harness.probe.detectors import batches, special

    assert special.backends(True) == ("interpreter", "gpu") and special.backends(False) == ("interpreter",)
    assert special.DETECTOR.backends == special.backends(special.GPU_SIDE)
    assert any("special" in b for b in batches("gpu")) == special.GPU_SIDE
    assert any("special" in b for b in batches("interpreter"))
    # in the GPU's first process right after the reference (its launches compile nothing new there), before the
    # guard bands and the layouts; on the interpreter where it was, after memcheck, race, order and scalars
    if special.GPU_SIDE:
        assert batches("gpu")[0][:4] == ["reference", "special", "guards", "layout"], batches("gpu")
    one = next(b for b in batches("interpreter") if "special" in b)
    assert one.index("special") > max(one.index(d) for d in ("memcheck", "race", "order", "scalars")), one
    assert special.DETECTOR.rank == 5 and special.DETECTOR.runs_at("interpreter") == 5


def test_a_detectors_order_on_a_backend_changes_where_it_runs_not_its_report_place(monkeypatch):
    """``Detector.order``: its place in its process on that backend; the registry (the report's order) stays by
    rank, and a detector without it runs by its rank."""
    import dataclasses

    from harness.probe import detectors

    reg = {"a": detectors.Detector("a", "", None, rank=0), "b": detectors.Detector("b", "", None, rank=1),
           "c": detectors.Detector("c", "", None, rank=2, order={"gpu": 0.5})}
    monkeypatch.setattr(detectors, "registry", lambda: reg)
    assert detectors.batches("gpu") == [["a", "c", "b"]] and detectors.batches("interpreter") == [["a", "b", "c"]]
    reg["c"] = dataclasses.replace(reg["c"], order=None)
    assert detectors.batches("gpu") == [["a", "b", "c"]]


def test_the_gpu_arithmetic_flushes_subnormals_and_keeps_exps_overflow_edge():
    """The reference's formula in a GPU's float32 arithmetic (``gpu_arithmetic``): a subnormal result is a zero
    (flush-to-zero), so the log of a probability of 1e-41 is -inf where IEEE float32 gives -94.5; exp overflows
    from the same float32 x as IEEE's (x * log2(e) reaches 128 less than float32's spacing from ln(max)); a view
    written into still writes into its base; values in float32's normal range are IEEE's."""
    import numpy as np
    import torch

    from harness.probe.detectors import special

    class NaiveLog:
        @staticmethod
        def reference(x):
            p = torch.softmax(x.double(), dim=-1)
            return torch.log(p)

    x = {"x": torch.tensor([[0.0, -94.5, -200.0, -3.0]])}
    ieee, gpu = special.in_kernel_formats(NaiveLog, x), special.in_kernel_formats(NaiveLog, x, gpu=True)
    exact = torch.log_softmax(x["x"].double(), dim=-1)
    assert torch.isfinite(ieee[..., :2]).all() and float(ieee[0, 1]) == pytest.approx(float(exact[0, 1]), abs=0.01)
    assert torch.isinf(gpu[0, 1]) and torch.isinf(gpu[0, 2]) and torch.isinf(ieee[0, 2])  # -200: 0 in both
    assert torch.allclose(gpu[0, [0, 3]], ieee[0, [0, 3]])
    near = [np.float32(88.72283935546875)]
    for _ in range(40):
        near.insert(0, np.nextafter(near[0], np.float32(0)))
        near.append(np.nextafter(near[-1], np.float32(100)))
    t = torch.tensor(np.array(near))
    assert torch.equal(torch.isinf(special.gpu_exp(t)), torch.isinf(torch.exp(t)))
    assert int(torch.isinf(torch.exp(t)).sum()) == 41  # the edge itself overflows, its neighbours below do not
    w = torch.linspace(-80, 80, 1001)
    assert torch.allclose(special.gpu_exp(w), torch.exp(w), rtol=1e-5, atol=0)  # far inside float32's 1e-4

    class ThroughAView:
        @staticmethod
        def reference(x):
            out = torch.zeros(x.shape, dtype=torch.float64)
            out.view(-1)[:] = x.double().reshape(-1) * 1e-40  # subnormal in float32
            return out + x.double()

    v = {"x": torch.ones(2, 3)}
    assert torch.equal(special.in_kernel_formats(ThroughAView, v, gpu=True), torch.ones(2, 3, dtype=torch.float64))
    assert special.format_runs({"x": v["x"]}, "gpu") == [(torch.float32, False), (torch.float32, True)]
    assert special.format_runs({"x": v["x"]}, "interpreter") == [(torch.float32, False)]


@pytest.mark.parametrize("reference,backend,severity", [
    ("naive", "interpreter", "error"),  # -94.5: IEEE float32 holds its probability, the kernel's -inf is its own
    ("naive", "gpu", None),  # a GPU's float32 flushes that probability in the reference's own formula too: quiet
    ("stable", "gpu", "error"),  # log_softmax is finite in any float32: -inf is wrong on the GPU
    ("stable", "interpreter", "error"),
])
def test_on_a_gpu_a_nonfinite_the_references_formula_meets_in_the_gpus_arithmetic_is_excused(reference, backend,
                                                                                              severity):
    """The GPU side's rule on a log of a softmax whose probability underflows: a kernel result of -inf where the
    float64 reference is finite is excused only where the reference's own formula, in the GPU's float32
    arithmetic, is non-finite there too (``format_runs``: IEEE's and the GPU's); against a log_softmax it is an
    error on either backend."""
    import torch

    from harness.probe.context import Context
    from harness.probe.detectors import special
    from harness.probe.execute import Call

    class T(_Target):
        @staticmethod
        def reference(x):
            x = x.double()
            return torch.log(torch.softmax(x, dim=-1)) if reference == "naive" else torch.log_softmax(x, dim=-1)

    given = {"x": torch.tensor([[0.0, -94.5, -3.0, -1.0]])}
    ref = special.X.reference_value(T, special.X.clone_inputs(given))
    assert torch.isfinite(ref).all()
    kernel = ref.clone().float()
    kernel[0, 1] = -float("inf")  # what log(exp(-94.5) / sum) gives where exp's subnormal result is flushed
    ctx = Context(T, backend, 0, "special")
    c = Call(out=kernel, ref=ref, cmp={"close": False})
    runs = special.format_runs(given, backend)
    got = special._judge(ctx, c, ref, "large", "X", lambda: [special.in_kernel_formats(T, given, d, e)
                                                             for d, e in runs], lambda: False)
    assert (got if got is None else got.severity) == severity, got


def test_special_values_go_where_the_rule_says():
    import torch

    from harness.probe.detectors import special

    x = {"x": torch.ones(3, 5), "v": torch.ones(4), "i": torch.arange(3)}
    assert special._place(x, "x", "zero") == "x[0, :]" and x["x"][0].abs().sum() == 0 and x["x"][1:].eq(1).all()
    assert special._place(x, "v", "nan") == "v[2]" and torch.isnan(x["v"]).sum() == 1
    big = special.large_value(torch.float32, 8)
    # seeded, with both signs in row 0 (a row of one sign gets its middle element at 15/16 of the magnitude, the
    # other sign: unseeded, this failed about once in a hundred runs)
    y = {"x": torch.randn(2, 8, generator=torch.Generator().manual_seed(0))}
    assert bool((y["x"][0] > 0).any() and (y["x"][0] < 0).any())
    assert "largest magnitude" in special._place(y, "x", "large")
    assert float(y["x"][0].abs().max()) == pytest.approx(big, rel=1e-6) and y["x"][1].abs().max() < 10
    assert special._place({"x": torch.ones(3).to(torch.float8_e4m3fn)}, "x", "+inf") is None  # it has no inf
    v = {"x": torch.tensor([[1.0, -3.0, 2.0], [9.0, 9.0, 9.0]])}
    assert special.moving_value(v["x"]) == 19.0  # twice the largest finite magnitude, plus one
    assert special._row(v["x"])[1] == 1 and special._place(v, "x", "nan") == "x[0, 1]"
    assert special.formats_of({"x": y["x"].half(), "w": y["x"]}) == [torch.float32, torch.float16]
    assert special.formats_of({"x": y["x"].double()}) == []


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64, torch.float8_e4m3fn])
@pytest.mark.parametrize("n", [1, 40, 128, 4096, 2 ** 31])
def test_the_large_rows_magnitude_overflows_exp_and_keeps_sums_of_squares(dtype, n):
    """The rule in the module's docstring, for each dtype and longest sum n: exp of the large row's magnitude
    overflows the narrowest format the kernel may compute in, and a sum of n of its squares fits it; where no
    magnitude does both, there is no large row."""
    import math

    from harness.probe.detectors import special

    fmt = special.narrowest_of(dtype)
    top = torch.finfo(fmt).max
    v = special.large_value(dtype, n)
    if v is None:
        assert math.sqrt(top / n) <= math.log(top)  # a value whose exp overflows has n squares that do too
        return
    assert v > math.log(top)  # exp(v) > top
    assert v * v * n <= top
    if dtype != torch.float64:  # a float64 reference of a naive exp formula stays finite
        assert math.isfinite(math.exp(2 * v))
    assert v < 0.25 * torch.finfo(dtype).max ** 0.5 or torch.finfo(dtype).bits <= 16  # the old rule's was larger


def test_a_dependence_shown_in_one_element_of_an_output_row_covers_the_row():
    """``_rows_of``: a 2-D output's row counts where one of its elements moved (a shared value multiplies the
    row's zeros too); a 1-D output (a scale per row) element by element."""
    from harness.probe.detectors import special
    from harness.probe.execute import Call

    c = Call(out=torch.zeros(3, 4))
    m = torch.zeros(12, dtype=torch.bool)
    m[5] = True
    assert special._rows_of(c, m).reshape(3, 4).tolist() == [[False] * 4, [True] * 4, [False] * 4]
    c = Call(out=torch.zeros(16), parts=[("q", (3, 4)), ("scale", (4,))])
    m = torch.zeros(16, dtype=torch.bool)
    m[0] = m[13] = True
    got = special._rows_of(c, m)
    assert got[:4].all() and not got[4:12].any() and got.tolist()[12:] == [False, True, False, False]
    # a move is beyond the dtype's own tolerance, or finite in one run and not the other
    a, b = torch.tensor([1.0, 1.0, 1.0, 5.0]), torch.tensor([1.0 + 1e-7, 2.0, float("nan"), 5.0])
    assert special._moved(Call(out=torch.zeros(4)), a, b).tolist() == [False, True, True, False]


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
    # a row of zeros in each input before any input's large row (the module's docstring: a budget that ends
    # after k runs has given the first k inputs their widest test)
    assert special.plan(["x", "k"]) == [("x", "zero"), ("k", "zero"), ("x", "large"), ("k", "large"),
                                        ("x", "negative"), ("x", "positive"), ("x", "nan"), ("x", "+inf"),
                                        ("x", "-inf"), ("k", "nan")]
    assert len(special.plan(list("abcdef"))) == special.MAX_RUNS


class _Target:
    """What ``special._judge`` reads of a probe target: its sizes and tolerance (float32's)."""
    tolerance = None
    sizes = {"n": 4}

    @staticmethod
    def tolerance_for(dtype, ref=None):
        return 1e-4, 1e-5


def _stale_allocations(monkeypatch):
    """Every fresh allocation holds NaN, as a block the allocator hands back may (on a GPU, one that a poisoned
    launch or a guard band left NaN in; on the CPU, now and then, freed memory that held one)."""
    from torch.overrides import handle_torch_function, has_torch_function

    plain = torch.empty_strided

    def empty_strided(*a, **k):  # what a look sees (a mode is handed it, by this name): memory that holds NaN
        if has_torch_function(()):
            return handle_torch_function(empty_strided, (), *a, **k)
        out = plain(*a, **k)
        return out.fill_(float("nan")) if out.is_floating_point() else out

    def empty_like(t, **k):
        if has_torch_function((t,)):
            return handle_torch_function(empty_like, (t,), t, **k)
        return empty_strided(t.shape, t.stride(), dtype=k.get("dtype", t.dtype))

    monkeypatch.setattr(torch, "empty_strided", empty_strided)
    monkeypatch.setattr(torch, "empty_like", empty_like)


def test_the_nan_the_reference_meets_is_one_it_computes_not_stale_memory(monkeypatch):
    """``meets_nan`` turns an error at a zero row into a note (the reference's own convention): only a NaN the
    reference computes counts, not one in a copy of its inputs seen before it was filled, nor in an allocation
    it has not written yet. Before, the copies were made inside the look, and a zero row's error became a note
    whenever the allocator handed back memory that held a NaN (89 of 200 times on the CPU for
    te-cross-entropy-backward-drops-per-token-grad's inputs)."""
    from harness.probe.detectors import special

    class T:
        def __init__(self, reference):
            self.reference = reference

    def filled(x):  # an allocation not yet written, then written
        out = torch.empty_like(x, dtype=torch.float64)
        out.copy_(x.double() * 2)
        return out

    x = torch.randn(4, 8)
    x[0] = 0.0
    _stale_allocations(monkeypatch)
    assert not special.meets_nan(T(lambda x: x.double() * 2), {"x": x})
    assert not special.meets_nan(T(filled), {"x": x})
    # 0/0 at the zero row: a NaN the reference computes (then clamped away: its convention)
    assert special.meets_nan(T(lambda x: torch.nan_to_num(x.double() / x.double().abs().sum(-1, keepdim=True))),
                             {"x": x})


STALE_RUN = r"""
import json
from pathlib import Path
import torch
from harness.probe import execute
from harness.probe.context import Context
from harness.probe.detectors import special
from harness.probe.target import load

plain = torch.empty_strided
def stale(*a, **k):  # every fresh allocation holds NaN (the allocator's stale memory)
    out = plain(*a, **k)
    return out.fill_(float("nan")) if out.is_floating_point() else out
torch.empty_strided = stale
execute.device_of = lambda backend: "cpu"  # the GPU side's own logic on the CPU too (no GPU here)
path = PATH
out = {}
for backend in ("interpreter", "gpu"):
    t = load(path, None, "rowscale_row0", "interpreter", str(Path(path).parent))
    out[backend] = [[f.code, f.severity, f.message] for f in special.run(Context(t, backend, 0, "special"))]
print("RESULT " + json.dumps(out))
"""


def test_a_zero_row_stays_an_error_when_the_allocator_hands_back_stale_nan(user):
    """The detector's own run on each side, every fresh allocation NaN: the kernel that scales every row by row
    0's scale is still an error at the second input's zero row (before: a note, "where the reference computes a
    NaN on its way", the NaN being the stale memory of its inputs' copies)."""
    got = run_interpreted(STALE_RUN.replace("PATH", repr(user["rowscale"]), 1))
    for backend in ("interpreter", "gpu"):
        errors = [f for f in got[backend] if f[1] == "error"]
        assert errors and errors[0][2].startswith("with a row of zeros in 's' (s[0, :])"), got[backend]


def test_severity_by_ieee_semantics():
    """NaN where the reference is finite: an error. Finite values off beyond the floor: an error at a zero row,
    a warning at an Inf input, an error at large values too, information where the reference computes a NaN on its
    way. Finite where the reference is NaN (a max that drops a NaN: IEEE 754-2008 maxNum) and NaN for Inf:
    information (a note's text)."""
    import torch

    from harness.probe.context import Context
    from harness.probe.detectors import special
    from harness.probe.execute import Call

    class T(_Target):
        pass

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
    # a finite value off at the large row: an error, as at a zero row (its magnitude keeps every sum in range)
    assert judge([1.0, nan, inf, 3.0], "large").severity == "error"
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


SHARE_RUN = r"""
import json
from pathlib import Path
from harness.probe import execute
from harness.probe.budget import Budget, ManualClock
from harness.probe.context import Context
from harness.probe.detectors import special
from harness.probe.target import load

execute.device_of = lambda backend: "cpu"  # the GPU side's own logic on the CPU too (no GPU here)
path = PATH
out = {}
for launcher in ("rowscale_row0", "rowscale"):
    for backend in ("interpreter", "gpu"):
        clock = ManualClock()
        t = load(path, None, launcher, "interpreter", str(Path(path).parent))
        events = []
        ctx = Context(t, backend, 0, "special", budget=Budget(clock=clock), emit=lambda **e: events.append(e))
        ctx.budget.deadline = clock.t + 2.5  # its share of the budget: the plain run and two more
        plain, calls = ctx.call, []
        ctx.call = lambda *a, **k: (clock.sleep(1.0), calls.append(1), plain(*a, **k))[2]  # a second a launch
        found = special.run(ctx)
        out[f"{launcher} {backend}"] = {"calls": len(calls), "events": events,
                                        "found": [[f.code, f.severity, f.message] for f in found]}
print("RESULT " + json.dumps(out))
"""


def test_a_short_share_reaches_each_inputs_zero_row_and_the_cut_is_in_the_status(user):
    """On a fake clock (a second a launch, a share of 2.5 s: the plain run and two more), on each side (the GPU side
    run on the CPU): a kernel that scales every row by row 0's scale (right as made, every row's scale the same)
    is caught at the second input's zero row, the second run: ordered by input, that run came fourth, after the
    first input's large row and the second's (off there only as information), and the share ended first. Its
    correct twin is quiet. The cut is a note and the status's "cut" event, which a bugs board's row keeps."""
    got = run_interpreted(SHARE_RUN.replace("PATH", repr(user["rowscale"]), 1))
    for backend in ("interpreter", "gpu"):
        broken, right = got[f"rowscale_row0 {backend}"], got[f"rowscale {backend}"]
        for r in (broken, right):
            assert r["calls"] == 3 and r["events"] == [{"event": "cut", "detector": "special"}], r
            assert r["found"][-1][0] == "P000" and "its share of the probe's budget" in r["found"][-1][2], r
        assert [f[1] for f in broken["found"]] == ["error", "info"], broken
        assert broken["found"][0][2].startswith("with a row of zeros in 's' (s[0, :])"), broken
        assert [f[1] for f in right["found"]] == ["info"], right


@pytest.mark.parametrize("message,defect,case", [
    ("with a row of large finite values in 'x' (x[0, :], largest magnitude 266) at rows=6, cols=40: 23 of 240 "
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


def test_a_nan_carried_along_the_kernels_own_data_path_is_no_evidence_of_a_defect():
    """The propagation warning names no defect: the diagnosis takes no evidence from it (a leak's error does)."""
    from harness.probe.detectors import special
    from harness.probe.diagnosis import evidence_of
    from harness.probe.findings import Finding

    said = ("with +inf in one element in 'x' (x[0, 20]) at rows=6, cols=40: 39 of 240 result elements NaN/Inf where "
            "the float64 reference is finite, first output[0,0] = nan (reference -0.5)")
    f = Finding("P207", "special", "interpreter", f"{said} (a warning: {special.PROPAGATES}: ...)", severity="warning")
    assert evidence_of([f]) == {}
    leak = Finding("P207", "special", "interpreter", said + ", elements whose result ...: it leaked", severity="error")
    assert set(evidence_of([leak])) == {"nonfinite", "nonfinite-input"}


def test_a_log_of_an_underflowed_probability_is_judged_by_the_references_own_formula(user):
    """Our own naive log-softmax kernel, log(softmax(x)): at the large row some probabilities underflow float32
    (x - max below -104) and their log is -inf. Against log_softmax (finite in any float32) that is an error;
    against a reference of the same formula, whose float32 evaluation underflows there too, it is quiet."""
    r = _special(user["logsoftmax"], "logsoftmax")
    assert any(f.severity == "error" and f.message.startswith("with a row of large finite values in 'x'")
               for f in r.by_code("P207")), r.text()
    quiet = _special(user["logsoftmax_naive_ref"], "logsoftmax")
    assert not quiet.problems, quiet.text()


GPU_PAIRS = [  # (reference, launcher, an error expected): our own kernels, broken and correct twins
    ("softmax", "softmax_naive", True), ("softmax", "softmax_stable", False),
    ("rownorm", "rownorm_no_eps", True), ("rownorm", "rownorm_eps", False),
    ("rows", "double_leaky", True), ("rows", "double", False),
    ("softplus", "softplus_naive", True), ("softplus_naive_ref", "softplus_naive", False),
    ("fakequant", "fakequant_leaky", True), ("fakequant", "fakequant", False),
    ("l2norm", "l2norm", False),
    # the GPU's own rule: -inf where the reference's formula in the GPU's float32 (flush-to-zero) is -inf too
    ("logsoftmax", "logsoftmax", True), ("logsoftmax_naive_ref", "logsoftmax", False),
]


def _gpu_special_runs(folder) -> dict:
    """Each pair of GPU_PAIRS probed on the GPU with the special detector alone, four at a time (each its own
    worker process, mostly compiling), no budget (the severities are judged here, not the time): {(reference,
    launcher): report}; and under "arithmetic" benchmarks/special_gpu.py's check of the GPU's float32 arithmetic
    against the detector's emulation of it ((log lines, covered)). ``folder``: a path, or a TemporaryDirectory
    kept alive with the runs."""
    import importlib.util
    from concurrent.futures import ThreadPoolExecutor

    paths = _write_user(Path(getattr(folder, "name", folder)))

    def one(pair):
        which, launcher, _ = pair
        return (which, launcher), probe(paths[which], launcher=launcher, backends=["gpu"], detectors=["special"],
                                        jobs=1, budget=0)

    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="special-gpu") as pool:
        out = dict(pool.map(one, GPU_PAIRS))
    spec = importlib.util.spec_from_file_location("special_gpu", Path(__file__).resolve().parents[1] / "benchmarks"
                                                  / "special_gpu.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out["arithmetic"] = bench.arithmetic()
    return out


def gpu_ahead(items, start):
    """With a GPU, the GPU special-value runs start at collection, beside the suite's other GPU work."""
    import tempfile

    if any(item.name.startswith("test_on_a_gpu_the_special_values") for item in items):
        start(("special-gpu",), _gpu_special_runs, tempfile.TemporaryDirectory(prefix="casebook-special-gpu-"))


@pytest.mark.gpu
def test_on_a_gpu_the_special_values_are_judged_alike(ahead, tmp_path):
    """The GPU side (``GPU_SIDE``): each broken twin an error, each correct twin without one, in device memory
    with the GPU's own arithmetic (its approximate exp, log, rsqrt and flush-to-zero); and the emulation of that
    arithmetic covers every NaN or Inf the GPU gives where IEEE float32 is finite (benchmarks/special_gpu.py)."""
    from harness.probe.detectors import special

    if not special.GPU_SIDE:
        pytest.skip("the special detector's GPU side is off (GPU_SIDE)")
    runs = ahead(("special-gpu",), _gpu_special_runs, tmp_path)
    wrong = []
    for which, launcher, error in GPU_PAIRS:
        r = runs[(which, launcher)]
        errors = [f for f in r.by_code("P207") if f.severity == "error"]
        ran = [st for _, d, _, st in r.ran if d == "special"]
        if bool(errors) != error or not (ran and ran[0].startswith("done")):
            wrong.append(f"{which}/{launcher}: {ran} {r.text()}")
    assert not wrong, "\n".join(wrong)
    lines, covered = runs["arithmetic"]
    assert covered, "\n".join(lines)

GPU_SIDE_RUN = r"""
import json
from pathlib import Path
from harness.probe import execute
from harness.probe.context import Context
from harness.probe.detectors import special
from harness.probe.target import load

execute.device_of = lambda backend: "cpu"  # the GPU side's own logic on the CPU (no GPU here)
path = PATH
out = {}
for backend in ("interpreter", "gpu"):
    t = load(path, None, "logsoftmax_ftz", "interpreter", str(Path(path).parent))
    out[backend] = [[f.code, f.severity, f.message] for f in special.run(Context(t, backend, 0, "special"))]
print("RESULT " + json.dumps(out))
"""


def test_the_gpu_side_excuses_a_flushed_subnormal_only_where_the_references_formula_meets_it_too(user):
    """The detector's own run on its GPU side, on the CPU: a log-softmax kernel that flushes subnormals as a GPU's
    float32 does gives -inf at the large row where the probability was subnormal (x - max = -92.9, -101.3).
    Against a reference of the same formula, log(softmax(x)): on the interpreter side an error (IEEE float32
    keeps that probability: the reference's formula is finite there), on the GPU side quiet (the formula in the
    GPU's arithmetic meets the same -inf). Against log_softmax it is an error on both sides."""
    naive = run_interpreted(GPU_SIDE_RUN.replace("PATH", repr(user["logsoftmax_naive_ref"]), 1))
    assert [f[1] for f in naive["interpreter"]] == ["error"], naive
    assert naive["interpreter"][0][2].startswith("with a row of large finite values in 'x'"), naive
    assert not [f for f in naive["gpu"] if f[1] in ("error", "warning")], naive
    stable = run_interpreted(GPU_SIDE_RUN.replace("PATH", repr(user["logsoftmax"]), 1))
    assert all(any(f[1] == "error" for f in stable[b]) for b in ("interpreter", "gpu")), stable


def test_the_large_row_holds_each_sign_the_input_holds():
    """A row of one sign (four heads, all negative) in an input that holds both: its middle element takes the
    other sign at 15/16 of the magnitude; an input of one sign keeps it; the largest magnitude is the given one."""
    from harness.probe.detectors.special import large_row

    row = torch.tensor([-1.0, -4.0, -2.0, -0.5])
    both = large_row(row, True, True, 266.0)
    assert both.tolist() == [-66.5, -266.0, 266.0 * 15 / 16, -33.25]
    assert large_row(row, False, True, 266.0).tolist() == [-66.5, -266.0, -133.0, -33.25]
    mixed = torch.tensor([1.0, -2.0, 0.5])
    assert large_row(mixed, True, True, 266.0).tolist() == [133.0, -266.0, 66.5]


def test_a_softplus_threshold_branch_that_picks_the_wrong_operand_is_an_error_named_a_wrong_formula(user):
    """g * softplus(x), linear past 20, where the typo's linear branch gives g in place of x: only pre-activations
    past 20 take that branch. x's first row is all negative (four columns); the large row's positive element
    (the sign the tensor holds elsewhere) takes it, and the result is off, finite: an error, and off too at a row
    of magnitude 44 where nothing overflows, so the diagnosis names the formula, not an overflow. Its correct twin
    is quiet; before, the large row kept row 0's one sign (never past 20), and a finite value off there was only
    information."""
    r = _special(user["softplus_grad"], "softplus_grad_typo")
    found = [f for f in r.by_code("P207") if f.severity == "error"]
    assert any(f.message.startswith("with a row of large finite values in 'x' (x[0, :], largest magnitude 266)")
               and "off by more than the tolerance" in f.message and "nothing overflows" in f.message
               for f in found), r.text()
    assert r.diagnosis[0]["defect"] == "wrong-formula", r.diagnosis
    quiet = _special(user["softplus_grad"], "softplus_grad")
    assert not quiet.problems, quiet.text()


@pytest.mark.parametrize("dtype, factor, severity", [
    (torch.bfloat16, 1.8, None),        # a correct bf16 kernel's rounding amplified at the large row: quiet
    (torch.bfloat16, -266 / 0.5, "error"),  # a branch that returns the row itself: still an error in bf16
    (torch.float16, 1.8, "error"),      # fp16's unit and its smaller row leave a few per cent: an error
    (torch.float32, 1.8, "error"),      # float32's: an error
])
def test_at_a_large_row_rounding_amplified_by_the_rows_scale_is_not_a_wrong_result(dtype, factor, severity):
    """At the large row the allowance grows by ``amplified``: floor.K units of the narrowest format the kernel may
    compute in, times how many times larger the row was made (``atol_scale``). fastvideo-kernel's bf16 attention
    backward (docs/measurements/fastvideo-argk-s27/): the textbook FlashAttention-2 order, in the kernel's
    formats, gives a dQ row about 1.8 times the float64 one at a key row of 266. Without the allowance every case
    below is an error."""
    from harness.probe.context import Context
    from harness.probe.detectors import special
    from harness.probe.execute import Call

    g = torch.Generator().manual_seed(0)
    inputs = {"x": torch.randn(4, 64, generator=g).to(dtype)}
    scale = special.atol_scale(inputs, "x")
    assert scale > 5  # a large row well above the row as made
    ref = torch.randn(8, 64, generator=g, dtype=torch.float64)
    out = ref.clone()
    out[3] *= factor  # one output row off by that factor (the dQ row of a query the large key dominates)
    ctx = Context(_Target, "interpreter", 0, "special")

    def judge(rounding):
        c = Call(out=out.float(), ref=ref, cmp={"close": False})
        got = special._judge(ctx, c, ref, "large", "X", lambda: [], lambda: False, scale=scale, rounding=rounding)
        return got if got is None else got.severity

    assert judge(0.0) == "error"  # the rule below is what decides
    assert judge(special.amplified(inputs, scale)) == severity
    assert special.amplified({"x": inputs["x"].double()}, scale) < 1e-12  # float64 alone: float64's unit


def test_an_argmax_whose_padded_lanes_read_0_is_wrong_at_a_row_of_negative_values_and_is_named(user):
    """Rows of 40 in blocks of 64, randn rows: right as made (no row of 40 such values is all below 0), wrong once
    the special detector's row of negative values is put in (a padded lane's 0 wins the argmax: index 40 or past),
    named padding-contamination; the -inf padded twin is quiet. Without the one-sign rows the probe is quiet on both."""
    r = _special(user["argmax"], "argmax_zero_padded")
    found = [f for f in r.by_code("P207") if f.severity == "error"]
    assert [f.message.startswith("with a row of negative values in 'x' (x[0, :], every value below 0, magnitudes kept)") for f in found
            ] == [True], r.text()
    assert "1 of 6 result elements off" in found[0].message, found[0].message
    assert found[0].defect_class == "padding-contamination", found[0]
    assert r.diagnosis[0]["defect"] == "padding-contamination", r.diagnosis
    assert not r.ok
    fixed = _special(user["argmax"], "argmax_inf_padded")
    assert not fixed.problems, fixed.text()


from harness.probe.detectors import special as special_words  # noqa: E402


def test_a_nan_in_a_real_input_that_reaches_only_the_outputs_padding_through_a_product_with_0_is_a_warning(user):
    """The output's padding rows masked by a product with 0: a NaN put into a real element makes its column's mean
    NaN, and 0 * NaN = NaN in the padding rows, where the reference (tl.where's twin) is 0 whatever x holds. No finite input
    is answered wrong there: a warning that says so, not the leak error (fastvideo-kernel's VSA backward: dK of
    padded keys). A leak into another row's data stays an error (the test above); the tl.where twin is quiet."""
    r = _special(user["centered"], "centered_by_product")
    nan = [f for f in r.by_code("P207") if f.message.startswith("with NaN in one element in 'x' (x[0, 20])")]
    assert nan and nan[0].severity == "warning" and special_words.PADDING_OUT[:80] in nan[0].message, r.text()
    assert not [f for f in r.by_code("P207") if f.severity == "error"], r.text()
    assert not _special(user["centered"], "centered_by_where").problems


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_a_row_of_one_sign_changes_signs_only_so_every_value_stays_exact_in_its_format(dtype):
    """-|x| and |x|, a 0 taking the row's smallest nonzero magnitude: each value one the format already held (a
    shift by the row's max rounds: an fp8 quantizer's data drawn exact, vllm's silu-mul, then came out off)."""
    from harness.probe.detectors import special

    g = torch.Generator().manual_seed(0)
    row = torch.randn(300, generator=g).to(dtype)
    row[7] = 0
    for negative in (True, False):
        got = special.one_sign_row(row, negative)
        assert bool((got < 0).all()) if negative else bool((got > 0).all())
        assert torch.equal(got.to(dtype).double(), got)  # held exactly
        assert torch.equal(got.abs()[row != 0], row.double().abs()[row != 0])
        assert float(got.abs()[7]) == float(row.double().abs()[row != 0].min())


def test_a_row_of_one_sign_goes_into_an_fp8_input_too():
    """torch compares no float8 tensor (``t > 0`` raises NotImplementedError): the detector failed on an fp8 input
    (sglang's fp8 block matmul, both backends) before the signs were read from a float32 copy."""
    from harness.probe.detectors import special

    g = torch.Generator().manual_seed(0)
    x = {"a": torch.randn(4, 16, generator=g).to(torch.float8_e4m3fn)}
    assert special._place(x, "a", "negative") is not None
    assert bool((x["a"][0].float() < 0).all()) and bool((x["a"][1:].float() > 0).any())
    assert special._place(x, "a", "positive") is not None and bool((x["a"][0].float() > 0).all())
