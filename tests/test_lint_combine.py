"""TL207: a ``tl.reduce`` or ``tl.associative_scan`` whose combine function transforms its operands.

Pairs, as in tests/test_lint_precision.py: each broken combine is flagged at the reduction's call, and the
same kernel written the way Triton means it (the transform before the reduction) is quiet; so are the
custom combines that only combine (an argmax over (value, index) pairs, a (sum, sum of squares) merge that
adds, Welford's merge, an online-softmax merge, a log-add-exp scan, a max of values already made absolute, a
signed abs-max that only chooses). The severity says when the hit is wrong: a two-sided transform in
``tl.reduce`` only at an axis of one element, which a launch of ``next_power_of_2(width)`` reaches (a bug) and
a fixed block of 1024 does not show (a hazard); a scan or a one-sided transform at every size.
"""

import pytest

from harness.lint import lint_source

HEAD = "import torch\nimport triton\nimport triton.language as tl\n"

KERNEL = '''
@triton.jit
def row_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, REDUCED)

def rows(x, out):
    row_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
'''


def kernel(combine: str, reduced: str) -> str:
    return HEAD + combine + KERNEL.replace("REDUCED", reduced)


ABS_MAX = '''
@triton.jit
def abs_max(a, b):
    return tl.maximum(tl.abs(a), tl.abs(b))
'''

FLASHNN_STYLE = '''
@triton.jit
def _abs_max(val1, val2):
    val1_abs = tl.abs(val1)
    val2_abs = tl.abs(val2)
    if val1_abs >= val2_abs:
        return val1_abs
    else:
        return val2_abs
'''

SQUARES = '''
@triton.jit
def sum_squares(a, b):
    return a * a + b * b
'''

EXP_SUM = '''
@triton.jit
def exp_sum(a, b):
    return tl.exp(a) + tl.exp(b)
'''

ONE_SIDED = '''
@triton.jit
def abs_max_into(acc, x):
    return tl.maximum(acc, tl.abs(x))
'''

PLAIN_MAX = '''
@triton.jit
def plain_max(a, b):
    return tl.maximum(a, b)
'''

PLAIN_ADD = '''
@triton.jit
def plain_add(a, b):
    return a + b
'''

SIGNED_ABS_MAX = '''
@triton.jit
def signed_abs_max(a, b):
    return tl.where(tl.abs(a) >= tl.abs(b), a, b)
'''

PAIRS = [  # (id, broken kernel, the same kernel with the transform before the reduction)
    ("abs-max", kernel(ABS_MAX, "tl.reduce(x, 0, abs_max)"), kernel("", "tl.max(tl.abs(x), axis=0)")),
    ("abs-max-keyword", kernel(ABS_MAX, "tl.reduce(x, axis=0, combine_fn=abs_max)"),
     kernel(PLAIN_MAX, "tl.reduce(tl.abs(x), axis=0, combine_fn=plain_max)")),
    ("abs-max-through-names-and-if", kernel(FLASHNN_STYLE, "tl.reduce(x, 0, _abs_max)"),
     kernel(PLAIN_MAX, "tl.reduce(tl.abs(x), 0, plain_max)")),
    ("sum-of-squares", kernel(SQUARES, "tl.reduce(x, 0, sum_squares)"), kernel(PLAIN_ADD, "tl.reduce(x * x, 0, plain_add)")),
    ("exp-sum", kernel(EXP_SUM, "tl.reduce(x, 0, exp_sum)"), kernel("", "tl.sum(tl.exp(x), axis=0)")),
    ("one-sided", kernel(ONE_SIDED, "tl.reduce(x, 0, abs_max_into)"), kernel(PLAIN_MAX, "tl.reduce(tl.abs(x), 0, plain_max)")),
]


@pytest.mark.parametrize("broken, fixed", [p[1:] for p in PAIRS], ids=[p[0] for p in PAIRS])
def test_a_transforming_combine_is_flagged_at_the_reduction_and_the_transform_first_is_quiet(broken, fixed):
    found = lint_source(broken, "broken.py", select=["TL207"])
    line = next(i for i, l in enumerate(broken.splitlines(), 1) if "tl.store(out_ptr + row" in l)
    assert [(f.code, f.line) for f in found] == [("TL207", line)], [str(f) for f in found]
    assert found[0].cases[0] == "reduce-combine-transforms" and "transform" in found[0].message
    assert [str(f) for f in lint_source(fixed, "fixed.py")] == []  # no default rule fires on it


ARGMAX = '''
@triton.jit
def argmax_combine(v1, i1, v2, i2):
    gt = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(gt, v1, v2), tl.where(gt, i1, i2)

@triton.jit
def argmax_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
    value, index = tl.reduce((x, cols), 0, argmax_combine)
    tl.store(out_ptr + row, index)
'''

SUM_SUMSQ = '''
@triton.jit
def add_pairs(s1, q1, s2, q2):
    return s1 + s2, q1 + q2

@triton.jit
def moments_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    s, q = tl.reduce((x, x * x), 0, add_pairs)
    tl.store(out_ptr + row, q / n_cols - (s / n_cols) * (s / n_cols))
'''

WELFORD = '''
@triton.jit
def welford_combine(mean_1, m2_1, weight_1, mean_2, m2_2, weight_2):
    delta = mean_2 - mean_1
    new_weight = weight_1 + weight_2
    w2_over_w = tl.where(new_weight == 0.0, 0.0, weight_2 / new_weight)
    return mean_1 + delta * w2_over_w, m2_1 + m2_2 + delta * delta * weight_1 * w2_over_w, new_weight

@triton.jit
def var_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean, m2, w = tl.reduce((x, tl.zeros_like(x), mask.to(tl.float32)), 0, welford_combine)
    tl.store(out_ptr + row, m2 / w)
'''

ONLINE_SOFTMAX = '''
@triton.jit
def softmax_merge(m1, s1, m2, s2):
    m = tl.maximum(m1, m2)
    return m, s1 * tl.exp(m1 - m) + s2 * tl.exp(m2 - m)

@triton.jit
def lse_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
    m, s = tl.reduce((x, tl.where(cols < n_cols, 1.0, 0.0)), 0, softmax_merge)
    tl.store(out_ptr + row, m + tl.log(s))
'''

LOG_ADD_EXP_SCAN = '''
@triton.jit
def log_add_exp(a, b):
    m = tl.maximum(a, b)
    return m + tl.log(tl.exp(a - m) + tl.exp(b - m))

@triton.jit
def logcumsumexp_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("-inf"))
    tl.store(out_ptr + row * n_cols + cols, tl.associative_scan(x, 0, log_add_exp), mask=cols < n_cols)
'''

DISCOUNTED = '''
@triton.jit
def discounted(a, b, gamma=0.5):
    return a + b

@triton.jit
def scan_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, tl.associative_scan(x, 0, discounted), mask=cols < n_cols)
'''

LAUNCH = '''
def run(x, out):
    {k}[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
'''

QUIET = [  # (id, a kernel whose custom combine only combines, an edit that makes it transform its operands)
    ("argmax-value-index", ARGMAX + LAUNCH.format(k="argmax_kernel"),
     ("return tl.where(gt, v1, v2), tl.where(gt, i1, i2)", "return tl.where(gt, tl.abs(v1), v2), tl.where(gt, i1, i2)")),
    ("sum-and-sum-of-squares", SUM_SUMSQ + LAUNCH.format(k="moments_kernel"),
     ("return s1 + s2, q1 + q2", "return s1 + s2, q1 * q1 + q2 * q2")),
    ("welford", WELFORD + LAUNCH.format(k="var_kernel"),
     ("return mean_1 + delta * w2_over_w,", "return tl.abs(mean_1) + delta * w2_over_w,")),
    ("online-softmax", ONLINE_SOFTMAX + LAUNCH.format(k="lse_kernel"),
     ("s1 * tl.exp(m1 - m) + s2 * tl.exp(m2 - m)", "tl.exp(s1) + tl.exp(s2)")),
    ("log-add-exp-scan", LOG_ADD_EXP_SCAN + LAUNCH.format(k="logcumsumexp_kernel"),
     ("return m + tl.log(tl.exp(a - m) + tl.exp(b - m))", "return tl.log(tl.exp(a) + tl.exp(b))")),
    ("max-of-absolute-values", kernel(PLAIN_MAX, "tl.reduce(tl.abs(x), 0, plain_max)"),
     ("return tl.maximum(a, b)", "return tl.maximum(-a, -b)")),
    ("signed-abs-max-only-chooses", kernel(SIGNED_ABS_MAX, "tl.reduce(x, 0, signed_abs_max)"),
     ("tl.where(tl.abs(a) >= tl.abs(b), a, b)", "tl.where(tl.abs(a) >= tl.abs(b), tl.abs(a), b)")),
    ("default-argument-is-no-operand", HEAD + DISCOUNTED + LAUNCH.format(k="scan_kernel"),
     ("return a + b", "return a * gamma + b")),
]


@pytest.mark.parametrize("quiet, edit", [p[1:] for p in QUIET], ids=[p[0] for p in QUIET])
def test_combines_that_only_combine_are_quiet_and_fire_once_they_transform(quiet, edit):
    quiet = quiet if quiet.startswith(HEAD) else HEAD + quiet
    loud = quiet.replace(*edit)
    assert loud != quiet, edit
    assert [str(f) for f in lint_source(quiet, "quiet.py")] == []  # no default rule fires on it
    assert [f.code for f in lint_source(loud, "loud.py", select=["TL207"])] == ["TL207"], loud


def test_severity_follows_the_sizes_at_which_it_is_wrong():
    """Both operands transformed in tl.reduce: wrong only at an axis of one element, so a bug where the launch
    passes ``next_power_of_2(width)`` (1 for a width of 1), a hazard where the block is a literal 1024; one
    operand transformed, or a scan, is wrong at every size: a bug wherever the kernel is launched."""
    reach = kernel(ABS_MAX, "tl.reduce(x, 0, abs_max)")
    fixed_block = reach.replace("BLOCK=triton.next_power_of_2(x.shape[1])", "BLOCK=1024")
    (bug,) = lint_source(reach, select=["TL207"])
    (hazard,) = lint_source(fixed_block, select=["TL207"])
    assert bug.severity == "bug" and "launched" in bug.reason
    assert hazard.severity == "hazard" and "one element" in hazard.reason
    (sided,) = lint_source(kernel(ONE_SIDED, "tl.reduce(x, 0, abs_max_into)").replace(
        "BLOCK=triton.next_power_of_2(x.shape[1])", "BLOCK=1024"), select=["TL207"])
    assert sided.severity == "bug" and "one operand only" in sided.message
    scan = HEAD + LOG_ADD_EXP_SCAN.replace("return m + tl.log(tl.exp(a - m) + tl.exp(b - m))",
                                           "return tl.maximum(tl.abs(a), tl.abs(b))") + LAUNCH.format(
        k="logcumsumexp_kernel").replace("BLOCK=triton.next_power_of_2(x.shape[1])", "BLOCK=1024")
    (scanned,) = lint_source(scan, select=["TL207"])
    assert scanned.severity == "bug" and "first element" in scanned.message


def test_a_combine_lint_cannot_resolve_is_left_alone():
    """A combine imported from elsewhere, or one of Triton's own, is not read: nothing to judge."""
    src = HEAD + "from helpers import abs_max\n" + KERNEL.replace("REDUCED", "tl.reduce(x, 0, abs_max)")
    assert lint_source(src, select=["TL207"]) == []
    src = HEAD + KERNEL.replace("REDUCED", "tl.reduce(x, 0, tl.maximum)")
    assert lint_source(src, select=["TL207"]) == []
