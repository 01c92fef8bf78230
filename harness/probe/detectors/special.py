"""Special values at the default sizes: a correct kernel gives what IEEE arithmetic of its reference gives.

At the default sizes, the floating-point tensor inputs that the reference reads (never an integer, bool
or index tensor, never an output buffer the reference does not read) are given again with special values
in them, the same way for any kernel, and each result is judged against the float64 reference of those
very inputs:

- a row of zeros (the first last-dim row of a matrix; the whole of a vector): a norm, a sum, an absmax
  of zero, what a padded or empty row holds. A reference that turns it into 0/0 = NaN is matched by a
  kernel that does so too (quiet); a reference that guards it (an ``eps``, a ``where``) must be matched;
- a row of large finite values (the row rescaled so that its largest magnitude is ``large_value``, below):
  an intermediate that a stable formula keeps in range (the row max subtracted before ``exp``, a threshold
  in softplus, a logsumexp) overflows in one that is not, and a branch of the formula that only large
  values take (softplus's linear part past its threshold, a clamp) is run. Such a branch sits on one side:
  softplus's at large positive values, a sigmoid's exp(-x) at large negative ones. So the row holds large
  values of each sign the input holds: where the rescaled row has none of a sign that the tensor has
  elsewhere (a short row: four heads all negative), its middle element takes that sign at 15/16 of the
  magnitude (large, and never tied in magnitude with the row's largest: an argmax of |x| stays defined).
  An input of one sign (a variance, a probability, a scale) keeps it;
- a row of one sign: the row's values made negative, -|x|, then positive, |x| (a 0 takes the row's smallest
  nonzero magnitude), for the largest input only, and only where that input holds values of both signs (a row
  of log-probabilities, scores, negated distances: data the input may hold). The neutral element of a max or an
  argmax is -inf, and of a min +inf: a value that is not in the row (0, a padded lane read as ``other=0.0`` or
  with ``padding_option="zero"``, an accumulator started at 0) wins the reduction exactly when every value of
  the row is below it, or above it for a min, which rows of random data of both signs never are (the
  softmax-mask-fill-zero lesson: "if every logit is negative, 0 becomes the row max"). Only signs change, so
  every value stays one its format holds exactly: a shift (x - max - gap, tried first) rounds, and data an
  entry draws exact in its kernel's formats (vllm's fp8 silu-mul quantizer, a test entry's fixed version,
  whose TOLERANCE holds for values fp8 holds exactly) then came out off by fp8's rounding, a false alarm;
- +inf, -inf and NaN, each in one element (the middle of that row).

How large the large row is comes from what it must show and what it must not break. Let M be the largest
value of the narrowest format a correct kernel of that input may hold intermediates in: its accumulator
(float32 for fp32, bf16, fp16 and fp8 data, whose ``tl.dot``, ``tl.sum`` and math functions widen to it;
float64 for float64 data) or the input's own dtype where that holds less (fp16: 65504; an fp16 kernel may
keep a product in fp16 before it applies a scale). The row must make ``exp`` overflow there: exp(v) > M,
v > ln(M) (88.72 in float32 and bf16, 11.09 in fp16, 709.78 in float64). It must not make a correct
kernel's squares, products and sums over a row overflow: a sum of n terms of v*v stays below M for the
largest dimension n of the floating inputs (the longest sum a kernel of them forms): v <= sqrt(M / n). So
v = 3 ln(M), at most sqrt(M / n):

- float32 and bf16: 266 at any size (sqrt(3.4e38 / n) is 4e14 even at n = 2**31): exp overflows for every
  element of the row above a third of its largest magnitude, so a row whose largest positive element is a
  third of its largest magnitude still overflows; exp(2 * 266) still fits float64, so a float64 reference of
  a naive formula stays finite and is judged; a sum of squares of a 2**31-element row is 1.5e14, so a correct
  float32 norm, variance or dot product is exact there as at magnitude 1. (The quarter of sqrt(max) this
  replaced, 4.6e18, overflowed float32 in v*v*n for any n >= 17: a correct row norm was called wrong.)
- fp16: 33.3 up to n = 59, sqrt(65504 / n) above (22.6 at n = 128: an fp16 product of the row and an int8
  weight before its scale, summed over 128, stays in fp16; 128, tried before, called a correct a16w8 GEMM
  wrong there); from n = 533 on no magnitude both overflows fp16's exp and keeps n squares in fp16, and the
  row is not put in (fp8 likewise: e4m3 from n = 13).
- float64: 2129.

A softplus without its threshold, a logsumexp or softmax without the max subtracted gives Inf at these
values; a correct kernel gives what the float64 reference gives.

The largest input gets all five; the next three matrices (largest first: a vector beside the data is mostly
a weight, a bias or a codebook, whose all-zero value makes ties IEEE does not order) a zero row and a large
row, the first of them a NaN; twelve runs at most, each stopped at the probe's budget. The order is by what a
run can show, not by input (``plan``): first a row of zeros in each input, largest first, then each one's large
row, then the non-finite values. At a zero row every kind of wrong result is an error (a finite value off, a 0/0
the reference guards): much of what a kernel does wrong with an input's rows shows there (a row read with
another row's index, a scale taken from the wrong row, a missing guard). At a large row too (an overflow, or the
branch large values take computing another value: softplus's linear part given the gradient in place of its
argument); at a non-finite value mostly warnings. Every run costs about the same
(one launch of the default launch's own specialization, the reference, the comparison; a result off also the
reference's formula in the kernel's formats, twice on a GPU), so a budget that ends after k runs has then given
the first k inputs their widest test before any input a narrower one. (Ordered by input, a second input's zero
row came fourth, after its large row, where a kernel that takes every row's scale from row 0 is off only as
information, and the budget's share could end before it.) What IEEE 754 fixes decides, element by element:

- the reference finite, the kernel NaN or Inf: wrong (an error), the input, the element and both values
  shown; this is also how a NaN or Inf in one row that leaks into rows the reference keeps finite shows.
  Except, for a value put in that is itself non-finite (+inf, -inf, NaN), at elements whose result depends
  on the element given it, in the reference (its value moved from the plain run's) or in the KERNEL's own
  computation: there the NaN/Inf is IEEE propagation along a data path the kernel has, a warning ("propagates
  through a shared row/group value such as a scale"), never an error. A quantizer whose scale is its row's
  or group's absmax (absmax = inf, then x / inf * inf = 0 * inf = NaN for every element of the row) is right
  against a reference that never forms that scale (an unquantized x): IEEE 754 defines no finite result for a
  formula that reads an infinite value, and mathematically equal formulas give NaN in one and a number in the
  other. The kernel's dependence is shown, not assumed: it runs again with that element at +V and at -V
  (``moving_value``: twice the tensor's largest finite magnitude plus one, which changes any max, min,
  absmax or sum it enters directly and keeps the data's order of magnitude), and the elements that moved
  beyond the output dtype's tolerance depend on it; so does every element of an output row where one moved (a
  value shared across a row multiplies its zeros too, and 0 times a finite value shows nothing where 0 times
  Inf is NaN). A value of the data's order does not stand for an Inf where it enters a shared value as a
  product with other data (silu(gate) * up with the Inf in ``up``: a negative gate's silu is 0.28 at most in
  magnitude, so silu(gate) * (2 max + 1) loses the group's absmax, the scale and the group's other elements do
  not move, though the Inf makes each of them 0 * inf = NaN; a result of one dimension has no row to close
  over). So the kernel runs again with that element at +-V' (``dominant_value``: the square root of the
  narrowest format's largest value over the longest dimension, 5.8e17 in float32 at 1024), which wins such a
  product as the Inf does; there only moves finite in both runs count (an intermediate it makes overflow, times
  0 in a masked lane, is NaN: no dependence), and a finite result that moves depends on it. A NaN where
  neither the reference nor the kernel depends on that element (masked lanes reading it times 0, a wrong
  index, another row's program) is the value leaking where it was never read: an error, as before, unless every
  element it leaked to holds no data (``no_data``: 0 in the reference here and at the default run, and in the
  kernel's default result: the output's padding, a masked position's gradient), which a kernel that masks by a
  product with 0 makes 0 * NaN = NaN from a NaN in a real input (IEEE) and one that masks with ``tl.where``
  keeps at 0: a warning, since no finite input is answered wrong (fastvideo-kernel's VSA backward, a first-run
  entry's fixed version: a NaN in q[0] makes NaN the dK of padded keys, P = 0 times D of row 0). Where
  those runs were not all made (the budget's end) the leak is not shown: a warning that says so. A finite value put in (a row of zeros, a large row) gets no such excuse: 0/0 in a kernel where
  the reference guards a zero row is wrong;
- the reference finite, the kernel finite and off by more than the tolerance and the error floor
  (``harness.probe.floor``, the comparison every detector makes): an error at a row of zeros; a warning
  at an Inf or a NaN input (IEEE fixes no result for a selection among them: which element a max, an
  argmax or a sort takes); information where the reference itself computes a NaN on its way (0/0 in its
  own formula: the finite value it then gives, a NaN cast to an integer, is its convention). At a row of
  large values it is an error like at a row of zeros: the row's magnitude keeps every square, product and
  sum over a row inside the format (above). (It was information when the row was 4.6e18, whose sums spanned
  2**60.) What a correct kernel's rounding does there is more than the error floor and the reference's own
  formula in the kernel's formats (below) estimate, though: a rounding of relative size u in an intermediate
  the row enters moves it by u times a value ``scale`` times larger (``atol_scale``), and an ``exp`` or a
  difference of large terms turns that into a relative error of the result, at places the kernel's formula
  picks, not the reference's. So at the large row an element is off only beyond ``amplified``: ``floor.K``
  units of the narrowest format the kernel may compute in, times ``scale``, of the element's magnitude (or its
  part's root mean square). Measured on fastvideo-kernel's block-sparse attention backward (bf16, a first-run
  entry; docs/measurements/fastvideo-argk-s27/): with a key row at 266 (90 times the row as made), an
  emulation of the textbook FlashAttention-2 backward in the kernel's formats (float32 scores and sums,
  P and dS rounded to bf16 as ``tl.dot`` operands, O stored in bf16; ours) gives -1.82 where the float64
  gradient is -1.04 (a dQ row about 1.8 times the float64 one: P * (dP - D) with D from the bf16 O), while the
  reference's own formula in bf16 gives -1.06 there; the released kernel is off by up to 1.49 (it also scales
  k in bf16 before the backward's scores). In bf16 the allowance is then 5.6 times the values: the large row
  still catches a branch that returns the row itself, not a rounding, and no longer a wrong branch whose value
  stays within a few times the right one (mamba's softplus threshold typo, -7 for 185, were its dt bf16: the
  bound takes every kernel's rounding as amplified by the row's scale, as an attention's is, though an
  elementwise formula's is not; the reference's own sensitivity to its inputs' rounding, which would tell them
  apart, was measured here (argk.py) and does not bound the FlashAttention-2 order's error element by element).
  In fp16 (2**-11, a row of at most 33)
  and float32 (2**-24) it stays a few per cent and 1e-4 of the values, below what a wrong branch moves them
  by (mamba's softplus threshold: -7 for 185; TransformerEngine's per-token gradient: -266 for -0.5). A
  TOLERANCE the file declares is stated at
  the data it makes: at the large row its absolute part is scaled by how much the row was (``atol_scale``: a
  quantizer's step is its row's absmax over 127, 2.1 at 266, where the file stated 0.03). Such an error is run
  once more with the row
  at ``tame_value``'s magnitude (half ln(M): 44 in float32), where no intermediate overflows: off there too,
  the finding says the branch large values take computes another value (the diagnosis: a wrong formula);
  right there, an intermediate overflows between the two (the diagnosis: overflow);
- the reference NaN or Inf and the kernel finite (a guard the reference does not have, a NaN that a max
  drops as IEEE 754-2008's maxNum and ``tl.maximum``'s default do), or another non-finite (NaN for Inf):
  information, not a wrong result;
- the reference or the launcher raising on the special value: information (its domain); an access
  outside memory or a write past a tensor: an error whatever the value.

What a correct kernel can do in its own number formats bounds what is called wrong ("the reference
evaluated in the kernel's input and accumulator dtypes", issue 37). Unless every floating input is float64,
the reference runs again with every float64 tensor it makes kept in float32 (``.double()`` and
``.to(torch.float64)`` do nothing: its own formula in the kernel's accumulator format), and again in each
floating input dtype narrower than that (fp16, bf16: a kernel of fp16 inputs may keep intermediates in
fp16); an element where one of these runs is non-finite too, or where the kernel is within ``floor.K``
times that run's distance from the float64 result, is not the kernel's fault: an ``exp`` that overflows
float32 in the reference's own formula (a softplus the reference writes as log1p(exp(x)), without a
threshold) overflows in any float32 kernel of that formula, and a sum of squares in an fp16 kernel's own
fp16 overflows as that formula in fp16 does. This holds for the large row as for every special value
(the formats' runs are made of the very inputs that run was given). Nor is Inf where the output's own dtype
cannot hold the reference's value (1e5 in an fp16 output).
A kernel that overflows where the reference's formula in those formats does not (``torch.softmax``
subtracts the max; ``torch.tanh`` saturates) is wrong: the softmax-no-max-subtraction lesson.

On a GPU (``GPU_SIDE``) the same runs are made in device memory and judged by the same rule: the same float64
reference, the same tolerance and error floor, NaN or Inf where the reference is finite as the evidence of an
error. What the GPU's own arithmetic gives at these values, against IEEE 754 (which the interpreter's numpy
gives), element by element:

- IEEE operations: ``+ - *`` and fused multiply-add, float32 ``/`` (``div.rn``; ``div.full`` where emitted gives
  the same at 0, inf and NaN), conversions (``cvt.rn``), and
  ``tl.dot`` (its TF32 rounding of fp32 inputs keeps float32's exponent range) are IEEE's, special values
  included: 0 * inf and inf - inf are NaN, x / 0 is inf, NaN propagates, overflow rounds to inf. A kernel is
  judged there exactly as on the interpreter. (``tl.maximum``/``tl.max`` drop a NaN on a GPU as IEEE 754-2008's
  maxNum does, where numpy's propagate it: a kernel finite where the reference is NaN is information on both.)
- the approximate functions (``tl.exp`` as ``ex2.approx`` of x * log2(e), ``tl.log`` as ``lg2.approx``,
  ``tl.sqrt``/``tl.rsqrt`` as ``sqrt.approx``/``rsqrt.approx``, ``tl.fdiv`` as ``div.full``) give IEEE's
  answer at every special value the detector puts in: exp(+inf) = inf, exp(-inf) = 0, log(0) = -inf,
  rsqrt(0) = inf, sqrt(inf) = inf, NaN in NaN out; a row of zeros meets them at exact values (exp(0),
  rsqrt(eps)). Off those values they are within a few float32 units in the last place, 1e-6 relative and
  less, far inside float32's tolerance (rtol 1e-4); so finite values off beyond the tolerance at a row of
  zeros (an error) are the kernel's. At the large row an argument of a few hundred meets ``tl.sin``/``tl.cos``
  past their exact range reduction where a kernel lowers them to ``sin.approx``/``cos.approx`` (an absolute
  error near 1e-5 at 266): still inside float32's tolerance, which the GPU's run of
  ``benchmarks/special_gpu.py`` is to confirm.
- two places where a GPU's float32 gives NaN or Inf where IEEE float32 is finite, neither at the values put in
  but at intermediates a formula makes of them:
  * flush-to-zero: Triton's libdevice (``enable_reflect_ftz``) and the ``.ftz`` approximate functions treat
    a subnormal (below 1.2e-38) as 0: log of one is -inf, rsqrt of one inf, a quotient of two 0/0 = NaN,
    where IEEE gives finite values (an exp(x - max) of -95 at the large row, a probability that underflowed);
  * exp near overflow: ``tl.exp`` overflows where x * log2(e), rounded to float32, reaches 128; that is
    within 3e-6 of IEEE's threshold, ln(3.4e38) = 88.72284, closer than float32's spacing there (7.6e-6): the
    first float32 x that overflows is the same, 88.722839, in IEEE's exp and in the emulation below (checked
    on every float32 there in tests/test_probe_special.py; the GPU's own in the benchmark). What is left is
    an exp rounded to fp16 or bf16 (Triton computes it in float32): ex2.approx's error (a few units of
    float32's last place) can carry a value within it of that format's rounding edge (65520 for fp16) over.
  A kernel whose formula is the reference's meets these where the reference's formula, evaluated in the
  same formats by the same arithmetic, does. So on a GPU the reference's formula in the kernel's formats
  (above) runs twice, with IEEE arithmetic and with the GPU's (``gpu_arithmetic``: every float32 or bf16
  result flushed to zero below float32's smallest normal, exp as exp2 of the float32 product x * log2(e),
  enlarged by ``EXP_MARGIN``, 2**-20, more than ex2.approx's error, and rounded to the tensor's own
  dtype); an element where either is non-finite, or where the kernel is within ``floor.K`` times either's
  distance from the float64 result, is not the kernel's fault. A kernel that meets them where the reference's
  formula does not (a log of a probability that a stable formula keeps as a log-sum-exp) gives NaN or Inf on
  the GPU where the true value is finite: wrong there, an error, as the severity rule says (wrong now on some
  backend). What a GPU gives at these points is measured, beside the emulation, by ``benchmarks/special_gpu.py``
  (its log: docs/measurements/special-gpu-h200.md), and tests/test_probe_special.py checks it on a GPU; the
  statements above about the GPU's instructions are what that run is to confirm.
"""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import budget_stop, fmt
from harness.probe.detectors import Detector, backends, kept_so_far, no_inputs_to_vary
from harness.probe.diagnosis import SPECIAL_BRANCH as BRANCH, SPECIAL_UNTOLD as UNTOLD
from harness.probe.diagnosis import SPECIAL_PROPAGATES as PROPAGATES

# what a large row's error says until (or where) it is run again where nothing overflows (``below_overflow``)
UNTOLD_SAID = f"; not run again where nothing overflows: {UNTOLD}"
from harness.probe.findings import ERROR, INFO, WARNING, Code

# Whether the detector runs on the GPU backend too (a probe with a GPU runs both backends: the GPU side puts the
# special values into device memory and judges the results by the same rule, with the reference's formula also
# in the GPU's arithmetic: the module's docstring). The one switch: on, until a run of benchmarks/special_gpu.py
# on a GPU says otherwise (its log committed under docs/measurements/).
GPU_SIDE = True
EXP_MARGIN = 2.0 ** -20  # the GPU-arithmetic exp's enlargement: 8 float32 ulps, more than ex2.approx's few
LOG2E = 1.4426950408889634
MAX_RUNS = 14
MAX_OTHERS = 3  # matrices beyond the largest input given a zero row and a large row, the first of them a NaN
MAX_FINDINGS = 3
# PROPAGATES: the words that name a NaN/Inf carried along a data path the kernel has (a warning, never an
# error); the diagnosis takes no evidence of a defect from a finding that says them
EXP_SHARE = 3.0  # times ln(the narrowest format's max): the large row's largest magnitude (``large_value``)
# variant -> (what it is in words, how a finite result off beyond the floor is taken); the words start each
# finding's message (the diagnosis reads them: harness.probe.diagnosis.SPECIAL_EVIDENCE)
VARIANTS = {
    "zero": ("a row of zeros", ERROR),
    "large": ("a row of large finite values", ERROR),
    "negative": ("a row of negative values", ERROR),
    "positive": ("a row of positive values", ERROR),
    "+inf": ("+inf in one element", WARNING),
    "-inf": ("-inf in one element", WARNING),
    "nan": ("NaN in one element", WARNING),
}


# what a finite result off at a row of one sign is (a value not in the row wins its max, min or argmax), as
# the diagnosis names it (its evidence "one-sign-row"): the finding's own class, for the cases it lists
ONE_SIGN_DEFECT = "padding-contamination"
ONE_SIGN = ("negative", "positive")  # the variants of a row of one sign


def plan(names: list) -> list:
    """(input, variant) of each run, most telling first (a budget's end cuts the last): a row of zeros in each
    input (``names``: largest first), where any wrong result is an error; then each one's large row (an overflow,
    or the branch large values take); then the largest one's rows of one sign (a max, a min that a value not in
    the row wins); then NaN in the largest, its infinities, NaN in the next (the module's docstring)."""
    first, others = names[:1], names[1:1 + MAX_OTHERS]
    return ([(k, "zero") for k in first + others] + [(k, "large") for k in first + others]
            + [(k, v) for k in first for v in ONE_SIGN]
            + [(k, v) for k in first for v in ("nan", "+inf", "-inf")] + [(k, "nan") for k in others[:1]])[:MAX_RUNS]


def candidates(target, inputs: dict, changed=()) -> list[str]:
    """The floating-point tensor inputs the reference reads, largest first, the largest of any shape and the
    others matrices (a vector beside the data is mostly a parameter: a weight, a bias, a codebook, whose
    all-zero value makes ties that IEEE does not order); with a reference that takes every input
    (``**kwargs``), not those the launch wrote (output buffers)."""
    import torch

    read, anything = X.reads(target, inputs)
    out = [k for k, v in inputs.items() if k in read and isinstance(v, torch.Tensor) and v.is_floating_point()
           and v.numel() and not (anything and k in changed)]
    out.sort(key=lambda k: -inputs[k].numel())
    return out[:1] + [k for k in out[1:] if inputs[k].dim() >= 2]


def _holds_inf(dtype) -> bool:
    import torch

    return bool(torch.isinf(torch.tensor(float("inf")).to(dtype).float()))


def accumulator_of(dtype):
    """The format a correct kernel of ``dtype`` inputs accumulates in: float64 for float64, float32 otherwise
    (fp16, bf16 and fp8 data are widened to float32 for ``tl.dot``, ``tl.sum`` and the math functions)."""
    import torch

    return torch.float64 if dtype == torch.float64 else torch.float32


def narrowest_of(dtype):
    """Of the input dtype and its accumulator, the format with the smaller largest value: a correct kernel may
    keep intermediates in either (an fp16 kernel's fp16 products before its scale), so both must hold them."""
    import torch

    acc = accumulator_of(dtype)
    return dtype if torch.finfo(dtype).max < torch.finfo(acc).max else acc


def large_value(dtype, n: int = 1) -> float | None:
    """The large row's largest magnitude (the module's docstring says why): ``EXP_SHARE`` times ln(M), at most
    sqrt(M / n), where M is the largest value of ``narrowest_of(dtype)`` and ``n`` the largest dimension of the
    floating inputs (a sum of n squares of it stays below M); None where that bound leaves it at or below
    ln(M) (no magnitude then makes ``exp`` overflow while sums stay representable: no large row). 266 for
    float32 and bf16, 2129 for float64; fp16: 33 up to n = 59, 22.6 at n = 128, None from n = 533."""
    import math

    import torch

    top = float(torch.finfo(narrowest_of(dtype)).max)
    v = min(EXP_SHARE * math.log(top), (top / max(n, 1)) ** 0.5)
    return v if v > math.log(top) else None


def largest_dim(inputs: dict) -> int:
    """The largest dimension of the floating-point tensor inputs: the longest sum a kernel of them forms."""
    import torch

    return max((d for v in inputs.values() if isinstance(v, torch.Tensor) and v.is_floating_point()
                for d in v.shape), default=1)


def _row(t):
    """The row ``_place`` changes (a view of ``t``: the first last-dim row of a matrix, the whole of a vector) and
    the index of the element one value goes into (its middle)."""
    row = t[(0,) * (t.dim() - 1)] if t.dim() >= 2 else t.reshape(1) if t.dim() == 0 else t
    return row, row.shape[0] // 2


def _place(inputs: dict, name: str, variant: str, magnitude: float | None = None) -> str | None:
    """Put ``variant`` into ``inputs[name]`` (a copy: changed in place); where, in words (None: the dtype has
    no such value, or no large value fits its rule: ``large_value``). ``magnitude``: the large row's largest
    magnitude, if not ``large_value``'s."""
    import torch

    t = inputs[name]
    if variant in ("+inf", "-inf") and not _holds_inf(t.dtype):
        return None
    row, j = _row(t)
    lead = "0, " * (t.dim() - 1)
    whole = f"{name}[{lead}:]" if t.dim() >= 2 else f"all of {name}"
    if variant == "zero":
        row.zero_()
        return whole
    if variant in ONE_SIGN:
        v = t.detach().float() if t.element_size() == 1 else t.detach()  # fp8 has no comparisons in torch
        if not (bool((v > 0).any()) and bool((v < 0).any())):
            return None  # an input of one sign keeps it (a variance, a probability, a scale)
        row.copy_(one_sign_row(row, variant == "negative"))
        return f"{whole}, every value {'below' if variant == 'negative' else 'above'} 0, magnitudes kept"
    if variant == "large":
        big = magnitude or large_value(t.dtype, largest_dim(inputs))
        if big is None:
            return None
        row.copy_(large_row(row, bool((t > 0).any()), bool((t < 0).any()), big))
        return f"{whole}, largest magnitude {big:.3g}"
    row[j] = {"+inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}[variant]
    return f"{name}[{lead}{j}]"


def one_sign_row(row, negative: bool):
    """``row`` (float64) with every value made negative (``negative``: -|x|) or positive (|x|), its magnitudes kept;
    a 0 takes the row's smallest nonzero magnitude (1 where every value is 0). Sign and magnitude alone change:
    every value stays one its format holds exactly, so data made to be exact in the kernel's formats (an fp8
    quantizer's inputs drawn as powers of two) stays so, and the result is judged as at the default run."""
    import torch

    a = row.double().abs()
    nz = a[(a > 0) & torch.isfinite(a)]
    a = torch.where(a == 0, torch.full_like(a, float(nz.min()) if nz.numel() else 1.0), a)
    return -a if negative else a


def large_row(row, positive: bool, negative: bool, big: float):
    """``row`` rescaled so that its largest magnitude is ``big`` (float64), holding large values of each sign the
    tensor holds (``positive``, ``negative``): where it has none of such a sign, its middle element takes that sign
    at 15/16 of ``big`` (the module's docstring)."""
    import torch

    r = row.double()
    m = float(r.abs().max())
    out = (r / m * big) if m > 0 and m == m and m != float("inf") else torch.full_like(r, big)
    j = out.shape[0] // 2
    if positive and not bool((out > 0).any()):
        out[j] = big * 15 / 16
    elif negative and not bool((out < 0).any()):
        out[j] = -big * 15 / 16
    return out


def moving_value(t) -> float:
    """The finite value the kernel's dependence on the element a non-finite value goes into is shown with
    (``kernel_moves``): twice the tensor's largest finite magnitude plus one, at most the dtype's largest value.
    It beats every element, so it changes any max (given with +), min (with -), absmax or sum it enters by more
    than its other terms' rounding; it stays of the data's order, so a product by 0 (a masked lane, a padded
    operand) stays 0 and shows no dependence that is not there."""
    import torch

    x = t.detach().double()
    x = x[torch.isfinite(x)]
    m = float(x.abs().max()) if x.numel() else 0.0
    return min(2.0 * m + 1.0, float(torch.finfo(t.dtype).max))


def dominant_value(t, n: int = 1) -> float | None:
    """The finite value that stands for an infinity put into ``t`` (``kernel_moves``): sqrt(M / n), M the largest
    value of ``narrowest_of(t.dtype)``, ``n`` the largest dimension of the floating inputs (``largest_dim``), so
    that its square, even n times over (an outer product summed), stays finite in any format a correct kernel of
    ``t`` computes in (float32 and bf16: 5.8e17 at n = 1024; fp16 8 there). An Inf wins every max, min, absmax
    and sum it enters whatever finite factor it is multiplied by first (silu(gate) * up with up = inf, a
    weight times x); ``moving_value``, of the data's order, does not where that factor is small (silu of a
    negative gate: -0.28 at most), and a value shared over a group of the result (its absmax, its scale) then
    does not move, though the Inf makes it Inf and every element of the group 0 * inf = NaN. This value wins
    those products as the Inf does, unless the factor is below 1/sqrt(M / n) of the data. Only finite moves are
    counted at it (an intermediate it makes overflow, times 0 in a masked lane, is NaN: no evidence of a
    dependence), and a finite result that moves with it depends on it. Where it is not above ``moving_value``
    (fp16 at wide rows, fp8) it is not run."""
    import torch

    v = (float(torch.finfo(narrowest_of(t.dtype)).max) / max(n, 1)) ** 0.5
    return min(v, float(torch.finfo(t.dtype).max))


def formats_of(inputs: dict) -> list:
    """The formats a correct kernel of these inputs may compute in: float32 (its accumulator), and each floating
    input dtype narrower than it (fp16, bf16: an fp16 kernel keeps intermediates in fp16); none for float64
    inputs alone."""
    import torch

    floats = {v.dtype for v in inputs.values() if isinstance(v, torch.Tensor) and v.is_floating_point()}
    if floats <= {torch.float64}:
        return []
    narrower = sorted((d for d in floats if torch.finfo(d).bits < 32 and d in (torch.float16, torch.bfloat16)),
                      key=str)
    return [torch.float32, *narrower]


def format_runs(inputs: dict, backend: str) -> list:
    """(dtype, gpu) of each run of the reference's own formula that excuses an element (``in_kernel_formats``):
    each of ``formats_of(inputs)`` in IEEE arithmetic, and on a GPU each again in the GPU's (``gpu_arithmetic``)."""
    formats = formats_of(inputs)
    return [(d, False) for d in formats] + ([(d, True) for d in formats] if backend == "gpu" else [])


def flushed(x):
    """``x`` with what a GPU's float32 arithmetic flushes to zero (flush-to-zero: a float32 or bf16 subnormal,
    below float32's smallest normal) made a zero of its sign; in place where it can be (a view keeps writing
    into its base, as the formula meant), else a copy. Other tensors and values as they are."""
    import torch

    if not (isinstance(x, torch.Tensor) and x.dtype in (torch.float32, torch.bfloat16) and x.numel()):
        return x
    small = (x != 0) & (x.abs() < torch.finfo(torch.float32).tiny)
    if not bool(small.any()):
        return x
    try:
        return x.copy_(torch.where(small, x * 0, x))
    except RuntimeError:  # an expanded tensor, a tensor that needs its grad: a copy
        return torch.where(small, x * 0, x)


def gpu_exp(x):
    """exp of ``x`` as a GPU's float32 arithmetic gives it at its largest: exp2 of the float32 product
    x * log2(e) (Triton's ``tl.exp``: ``ex2.approx`` of that product, inf from 128 on, within 3e-6 of IEEE's
    overflow at ln(3.4e38): the same first float32), enlarged by ``EXP_MARGIN`` (more than ex2.approx's own
    error), rounded to ``x``'s dtype (an fp16 or bf16 exp is computed in float32 and rounded, as Triton widens
    it)."""
    import torch

    y = torch.exp2(x.float() * LOG2E) * (1.0 + EXP_MARGIN)
    return y.to(x.dtype)


def gpu_arithmetic(func, args, kwargs):
    """``func(*args, **kwargs)`` as a GPU's float32 arithmetic may give it where it differs from IEEE's in making
    NaN or Inf (the module's docstring): exp of a float32, fp16 or bf16 tensor by ``gpu_exp``, every result
    ``flushed``."""
    import torch

    x = args[0] if args else None
    if (func in (torch.exp, torch.Tensor.exp) and isinstance(x, torch.Tensor)
            and x.dtype in (torch.float32, torch.float16, torch.bfloat16) and not kwargs and len(args) == 1):
        out = gpu_exp(x)
    else:
        out = func(*args, **(kwargs or {}))
    if type(out) in (tuple, list):
        return type(out)(flushed(v) for v in out)
    return flushed(out)


def in_kernel_formats(target, inputs: dict, dtype=None, gpu: bool = False):
    """The reference with every float64 tensor it makes kept in ``dtype`` (float32 by default: its own formula
    in the kernel's accumulator format), flat float64 like ``execute.reference``; None where it raises.
    ``gpu``: in a GPU's float32 arithmetic (``gpu_arithmetic``: flush-to-zero, exp's own overflow)."""
    import torch
    from torch.overrides import TorchFunctionMode

    dtype = dtype or torch.float32

    def narrow(x):
        if isinstance(x, torch.Tensor) and x.dtype == torch.float64:
            return x.to(dtype)
        if type(x) in (tuple, list):
            return type(x)(narrow(v) for v in x)
        return x

    class Narrow(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if gpu:
                return flushed(narrow(gpu_arithmetic(func, args, kwargs)))
            return narrow(func(*args, **(kwargs or {})))

    from harness.run.worker import call_with

    try:
        with Narrow():
            raw = call_with(target.reference, X.clone_inputs(inputs))
        return X.as_reference(raw)  # float64 again, outside the mode
    except Exception:  # noqa: BLE001  the reference declines float32: no excuse from it
        return None


# functions whose result is memory not yet written (its values are whatever the memory held: on a GPU, a block of
# the caching allocator that a poisoned launch or a guard band left NaN in), not a value the reference computed
UNWRITTEN = frozenset({"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided"})


def meets_nan(target, inputs: dict) -> bool:
    """Whether the reference, on these inputs, computes a NaN anywhere on its way (given one, or making one:
    0/0, inf - inf, 0 * inf, IEEE's invalid operations): a finite result it then gives from it (a NaN cast to
    an integer, a selection among NaN, a ``where``) is its convention, not arithmetic. Only what it computes is
    looked at: the inputs are copied before (a copy's fresh allocation, seen before it is filled, holds whatever
    the memory held: NaN from an earlier run, now and then on the CPU, as the allocator hands it back), and an
    allocation not yet written (``UNWRITTEN``) is not looked at."""
    import torch
    from torch.overrides import TorchFunctionMode

    seen = []
    given = X.clone_inputs(inputs)

    def look(x):
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() and not seen:
            if bool(torch.isnan(x.detach()).any()):
                seen.append(True)
        elif type(x) in (tuple, list):
            for v in x:
                look(v)

    class Look(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if getattr(func, "__name__", "") not in UNWRITTEN:
                look(out)
            return out

    try:
        with Look():
            X.reference_value(target, given)
    except Exception:  # noqa: BLE001  it raised on them before: judged as it is
        return False
    return bool(seen)


def _skip(ctx) -> str | None:
    return no_inputs_to_vary(ctx, candidates, "no floating-point tensor input that the reference reads: no "
                                              "special value to put in")


def run(ctx) -> list:
    ctx.budget.begin_share()  # a share of what is left: fuzzing and the diagnosis come after (budget.VARY_SHARE)
    from harness.errors import error_line

    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)
    with ctx.instrument(poison_masked=False):
        base = ctx.call(X.clone_inputs(inputs), ref=ref, changed=True)
    if base.error is not None or not base.cmp.get("close") or base.guard.get("wrote_past_end"):
        return []  # wrong (or raised) at the defaults already: the reference detector's finding
    names = candidates(t, inputs, base.changed)
    formats = format_runs(inputs, ctx.backend)
    found, notes = [], []
    moved = {}  # input -> kernel_moves of its element (the same element for NaN, +inf and -inf: run once)
    ctx.board.special_now = found  # what the budget's end keeps (partial)
    cut = False
    for name, variant in plan(names):
        if cut := ctx.late():
            break
        given = X.clone_inputs(inputs)
        where = _place(given, name, variant)
        if where is None:
            continue
        said = f"{VARIANTS[variant][0]} in '{name}' ({where}) at {fmt(t.sizes)}"
        try:
            r = X.reference(t, given)
        except Exception as e:  # noqa: BLE001  the reference's domain
            notes.append(f"the reference raised with {said}: {error_line(e)}")
            continue
        with ctx.instrument(poison_masked=False):
            c = ctx.call(X.clone_inputs(given), ref=r)
        scale = atol_scale(inputs, name) if variant == "large" else 1.0
        got = _judge(ctx, c, r, variant, said, lambda g=given: [in_kernel_formats(t, g, d, e) for d, e in formats],
                     lambda g=given: meets_nan(t, g), base=base.ref,
                     moves=lambda n=name: _once(moved, n, lambda: kernel_moves(ctx, inputs, n, base)),
                     scale=scale, rounding=amplified(inputs, scale) if variant == "large" else 0.0,
                     base_out=base.out)
        if isinstance(got, str):
            notes.append(got)
        elif got is not None:
            found.append(got)  # kept before the run below: the budget's stop there keeps it, untold
            if variant == "large" and got.severity == ERROR and "NaN/Inf" not in got.message:
                said_first = got.message
                got.message = (said_first + UNTOLD_SAID)[:500]
                got.message = (said_first + below_overflow(ctx, inputs, name))[:500]
    ctx.board.special_now = None
    out = sorted(found, key=lambda f: ("error", "warning", "info").index(f.severity))[:MAX_FINDINGS]
    if notes and not any(f.severity != INFO for f in out):
        out.append(ctx.finding("P207", f"information: {'; '.join(notes[:2])}"[:500], severity=INFO))
    return out + ([budget_stop(ctx, 'the special values not yet tried')] if cut else [])


def _once(memo: dict, key, make):
    """``memo[key]``, made by ``make()`` the first time."""
    if key not in memo:
        memo[key] = make()
    return memo[key]


def _at(i: int, c) -> str:
    """The output element of flat index ``i``: its part's name and index."""
    from harness.core.compare import element_index

    shape = tuple(c.ref.shape) if not c.parts else None
    if c.parts:
        at = 0
        for n, s in c.parts:
            size = 1
            for d in s:
                size *= d
            if i < at + size:
                return f"{n}{element_index(i - at, s)}"
            at += size
    return f"output{element_index(i, shape or (c.ref.numel(),))}"


def _tolerance_mask(ctx, c, o, r, ref, scale: float = 1.0, rounding: float = 0.0):
    """Elements of the flat output ``o`` beyond the tolerance and the error floor of the flat reference ``r``
    (each part with its own dtype's tolerance, as ``execute.call`` compared them); a TOLERANCE the file declares
    has its absolute part times ``scale`` (``atol_scale``). ``rounding``: at a large row, the relative error a
    correct kernel's own roundings may be amplified to there (``amplified``), of each element's magnitude or,
    where larger, of its part's root mean square (an element near 0 among large ones)."""
    import torch

    from harness.probe import floor

    allow = floor.allowance(ref)
    allow = allow.reshape(-1) if allow is not None and allow.numel() == r.numel() else torch.zeros_like(r)
    spans = _spans(c, r.numel())
    bad = torch.zeros_like(r, dtype=torch.bool)
    for a, b, dt in spans:
        if not dt.is_floating_point:
            bad[a:b] = o[a:b] != r[a:b]
            continue
        rtol, atol = ctx.target.tolerance_for(dt, r[a:b])
        atol = atol * scale if ctx.target.tolerance is not None else atol
        d = (o[a:b] - r[a:b]).abs()
        bad[a:b] = d > atol + rtol * r[a:b].abs() + allow[a:b] + rounding * _magnitudes(r[a:b])
    return bad


def _magnitudes(r):
    """Each element's magnitude, at least the root mean square of the finite elements of ``r``."""
    import torch

    fin = r[torch.isfinite(r)]
    rms = float(fin.square().mean().sqrt()) if fin.numel() else 0.0
    return torch.clamp_min(torch.nan_to_num(r.abs(), nan=0.0, posinf=0.0), rms)


def amplified(inputs: dict, scale: float) -> float:
    """The relative error a correct kernel's roundings may reach at a large row made ``scale`` times larger than the
    row as made (``atol_scale``): ``floor.K`` units of the narrowest format it may compute in (``formats_of``:
    bf16's 2**-8, fp16's 2**-11, float32's 2**-24), times ``scale``. A rounding of relative size u in an
    intermediate the row enters (a logit, a scaled key, a probability or its gradient kept in bf16 as a ``tl.dot``
    operand) moves what follows by u times that intermediate: ``scale`` times more at the large row, and an
    ``exp`` or a difference of large terms (softmax's gradient, P * (dP - D)) turns that into a relative error of
    the result. Which intermediates a kernel rounds, and where, its formula decides, not the reference's: the
    error floor and the reference's own formula in the kernel's formats, estimated from the reference, miss it
    (module docstring, "At a row of large values")."""
    import torch

    from harness.probe import floor

    units = [torch.finfo(d).eps / 2 for d in formats_of(inputs)] or [2.0 ** -53]
    return floor.K * max(units) * max(scale, 1.0)


def _spans(c, n: int) -> list:
    """(start, end, dtype) of each output in the flat result (one, or each of ``c.parts``)."""
    if not c.parts:
        return [(0, n, c.out.dtype)]
    spans, at = [], 0
    for (_, s), dt in zip(c.parts, c.dtypes):
        size = 1
        for d in s:
            size *= d
        spans.append((at, at + size, dt))
        at += size
    return spans


def _rounded_to_output(c, r):
    """The flat float64 reference rounded to each output's own floating dtype: where that is Inf, the output
    cannot hold the value, and Inf is its correctly rounded result (IEEE overflow in the output format)."""
    out = r.clone()
    for a, b, dt in _spans(c, r.numel()):
        if dt.is_floating_point and dt != out.dtype:
            out[a:b] = r[a:b].to(dt).double()
    return out


def _excused(formats, o, r, nonfinite, finite_off):
    """The two masks less the elements where the reference's own formula, in one of the kernel's formats
    (``formats()``), overflows too or is off as much."""
    import torch

    from harness.probe import floor

    for rn in formats() or ():
        if rn is not None and rn.numel() == r.numel():
            rn = rn.reshape(-1).double()
            nonfinite = nonfinite & torch.isfinite(rn)  # its own formula overflows there in that format too
            finite_off = finite_off & ~((o - r).abs() <= floor.K * (rn - r).abs())
    return nonfinite, finite_off


PADDING_OUT = ("it reached, past what depends on it, only elements that hold no data (0 in the reference here and "
               "at the default run, as in the kernel's: the output's padding) through a product with 0 (0 * NaN = "
               "NaN; tl.where keeps 0): no finite input is answered wrong")


def no_data(r, base, base_out):
    """The flat result elements that hold no data: 0 in the reference ``r`` and in the default run's reference
    ``base`` and kernel result ``base_out`` (the output's padding, a masked position's gradient: the reference
    writes 0 there whatever the inputs). A NaN put into a real input that reaches them only through a product
    with 0 (a masked lane's P = 0 times a row value computed from the NaN) answers no finite input wrong; one
    that reaches an element holding data (another row's result: a NaN in one sequence poisoning the batch, a
    padded input's garbage reaching real outputs) is the leak the rule is for. All False where a run is
    missing or of another size."""
    import torch

    none = torch.zeros(r.numel(), dtype=torch.bool)
    if base is None or base_out is None or base.numel() != r.numel() or base_out.numel() != r.numel():
        return none
    b, k = base.reshape(-1).double().cpu(), base_out.reshape(-1).double().cpu()
    return (r.reshape(-1).cpu() == 0) & (b == 0) & (k == 0)


def reads_it(variant: str, r, base):
    """For a non-finite value put in: the result elements whose reference value moved from the default run's
    (``base``), i.e. that depend on the element given it; None for the finite variants (or no base to compare)."""
    import torch

    if VARIANTS[variant][1] == ERROR or variant == "large" or base is None or base.numel() != r.numel():
        return None
    b = base.reshape(-1).double()
    return ~((r == b) | (torch.isnan(r) & torch.isnan(b)))


def kernel_moves(ctx, inputs: dict, name: str, base):
    """The result elements whose KERNEL value depends on the element of ``inputs[name]`` that a non-finite value
    goes into, shown by running the kernel with that element at +``moving_value`` and at -``moving_value`` (a
    finite value that changes any max, min, absmax or sum it enters), then at +-``dominant_value`` (one that
    stands for the infinity: it wins a max even as a product with a small factor), against the plain run
    ``base``: the elements that moved beyond the tolerance (``_moved``; at the dominant value finite in both
    runs only), closed over the rows of each output (``_rows_of``). None where not every run was made (the
    budget's end) or none ran (the launcher raising): the dependence is then not shown either way."""
    if base is None or base.out is None:
        return None
    seen = None
    small = moving_value(inputs[name])
    big = dominant_value(inputs[name], largest_dim(inputs))
    for value, finite in [(small, False)] + ([(big, True)] if big > small else []):
        for sign in (1.0, -1.0):
            if ctx.late():
                return None
            given = X.clone_inputs(inputs)
            row, j = _row(given[name])
            row[j] = sign * value
            with ctx.instrument(poison_masked=False):
                c = ctx.call(given, ref=base.ref)
            if c.error is not None or c.out is None or c.out.numel() != base.out.numel():
                continue
            m = _moved(base, c.out.reshape(-1).double(), base.out.reshape(-1).double(), finite=finite)
            seen = m if seen is None else seen | m
    return None if seen is None else _rows_of(base, seen)


def _moved(c, a, b, finite: bool = False):
    """Elements of the flat results ``a`` (another run) and ``b`` (``c``'s) that differ: finite in one and not
    the other (unless ``finite``), or both finite and apart by more than the output dtype's own tolerance
    (``DTYPE_TOLERANCE``, not a TOLERANCE the file declares for its accuracy: a GPU's atomics reorder a sum
    within the dtype's, and a quantizer's declared step would hide the moves that show a dependence)."""
    import torch

    from harness.probe.target import DEFAULT_TOLERANCE, DTYPE_TOLERANCE, magnitude

    fa, fb = torch.isfinite(a), torch.isfinite(b)
    out = (fa != fb) & (not finite)
    for lo, hi, dt in _spans(c, b.numel()):
        both = fa[lo:hi] & fb[lo:hi]
        if not dt.is_floating_point:
            out[lo:hi] |= both & (a[lo:hi] != b[lo:hi])
            continue
        rtol, atol = DTYPE_TOLERANCE.get(str(dt).replace("torch.", ""), DEFAULT_TOLERANCE)
        atol *= magnitude(b[lo:hi])
        out[lo:hi] |= both & ((a[lo:hi] - b[lo:hi]).abs() > atol + rtol * b[lo:hi].abs())
    return out


def _rows_of(c, mask):
    """``mask`` closed over the last-dim rows of each output of two or more dimensions: an element counts where
    any element of its output row does. A value the kernel shares across a row (a scale, an absmax, a norm)
    multiplies even the row's zeros, where 0 times any finite value shows no dependence and 0 times Inf or
    NaN is NaN. Outputs of one dimension (a scale per row, a loss per token) are kept element by element."""
    out = mask.clone()
    shapes = c.parts if c.parts else [("", tuple(c.out.shape))]
    at = 0
    for _, shape in shapes:
        size = 1
        for d in shape:
            size *= d
        if len(shape) >= 2 and shape[-1] > 0 and size:
            rows = mask[at:at + size].reshape(-1, shape[-1])
            out[at:at + size] = rows.any(dim=1, keepdim=True).expand_as(rows).reshape(-1)
        at += size
    return out


def _nonfinite_finding(ctx, c, o, r, nonfinite, variant: str, said: str, base, moves=None, base_out=None):
    """NaN/Inf out where the reference is finite. For a non-finite value put in: an error only at elements
    where neither the reference (``reads_it``) nor the kernel's own result (``moves()``: ``kernel_moves``)
    depends on the element given it (it leaked there), else a warning (IEEE propagation along a path the
    kernel has: a shared row or group value such as a scale); a warning too where every element it leaked to
    holds no data (``no_data``: the output's padding, 0 in the reference here and at the default run, and in
    the kernel's default result ``base_out``). For a finite one (a zero row, a large row): an error."""
    dep = reads_it(variant, r, base)
    untried = False
    if dep is not None and bool((nonfinite & ~dep).any()) and moves is not None:
        if (mine := moves()) is not None and mine.numel() == r.numel():
            dep = dep | mine
        else:
            untried = True
    leaked = nonfinite if dep is None else nonfinite & ~dep
    shown = leaked if bool(leaked.any()) else nonfinite
    i = int(shown.nonzero()[0])
    what = (f"with {said}: {int(shown.sum())} of {r.numel()} result elements NaN/Inf where the float64 "
            f"reference is finite, first {_at(i, c)} = {float(o[i]):.7g} (reference {float(r[i]):.7g})")
    if untried and bool(leaked.any()):  # a leak is not shown where the kernel's own dependence was not tried
        return ctx.finding("P207", f"{what} (a warning: whether the kernel's own result there depends on the value "
                                   f"put in was not tried, the budget's end or the launcher raising at a finite "
                                   f"value there: IEEE propagation through a shared value such as a scale, or a "
                                   f"leak)"[:500], severity=WARNING, sizes=dict(ctx.target.sizes))
    if bool(leaked.any()) and dep is not None and not bool((leaked & ~no_data(r, base, base_out)).any()):
        return ctx.finding("P207", f"{what} (a warning: {PADDING_OUT})"[:500], severity=WARNING,
                           sizes=dict(ctx.target.sizes))
    if bool(leaked.any()):
        return ctx.finding("P207", (what + ("" if dep is None else ", elements whose result depends on the value "
                                            "put in neither in the reference nor in the kernel (it does not move "
                                            "when that element is given another finite value): it leaked"))[:500],
                           severity=ERROR, sizes=dict(ctx.target.sizes))
    return ctx.finding("P207", f"{what} (a warning: {PROPAGATES}: these elements depend on the non-finite value "
                               f"put in, in the reference or in the kernel's own result, and IEEE arithmetic lets "
                               f"equal formulas differ there: inf / inf, 0 * inf)"[:500], severity=WARNING,
                       sizes=dict(ctx.target.sizes))


def _judge(ctx, c, ref, variant: str, said: str, formats, nan_met, base=None, moves=None, scale: float = 1.0,
           rounding: float = 0.0, base_out=None):
    """The finding of one run with a special value (``said``), a note's text, or None (right). ``formats()``:
    the reference's own formula in the kernel's formats (``in_kernel_formats``, or None); ``nan_met()``: whether
    the reference computes a NaN on its way (``meets_nan``); ``base``: the default run's reference, flat
    (``reads_it``); ``moves()``: the elements the kernel's own result depends on the element given a non-finite
    value at (``kernel_moves``), asked only where the reference does not explain a NaN."""
    import torch

    from harness.errors import error_line
    from harness.probe.context import device_fault, label

    if c.error is not None:
        if device_fault(c.error):
            return ctx.finding("P207", f"with {said}: the launch raised {error_line(c.error)} (an access outside "
                                       f"memory)"[:500], severity=ERROR, sizes=dict(ctx.target.sizes))
        return f"the launcher raised with {said}: {error_line(c.error)}"
    if past := c.guard.get("wrote_past_end"):
        return ctx.finding("P207", f"with {said}: wrote outside {', '.join(label(n) for n in past)}"[:500],
                           severity=ERROR, sizes=dict(ctx.target.sizes))
    if c.cmp.get("close") or c.out is None or c.out.numel() != c.ref.numel():
        return None  # right, or a structure the reference detector reports
    o, r = c.out.reshape(-1).double(), c.ref.reshape(-1).double()
    rf, of = torch.isfinite(r), torch.isfinite(o)
    nonfinite = rf & ~of & torch.isfinite(_rounded_to_output(c, r))  # an fp16 output holds no 1e5: inf is right
    finite_off = rf & of & _tolerance_mask(ctx, c, o, r, ref, scale, rounding)
    if bool(nonfinite.any() or finite_off.any()):
        nonfinite, finite_off = _excused(formats, o, r, nonfinite, finite_off)
    if bool(nonfinite.any()):
        return _nonfinite_finding(ctx, c, o, r, nonfinite, variant, said, base, moves, base_out)
    if bool(finite_off.any()):
        i = int(torch.where(finite_off, (o - r).abs(), torch.full_like(r, -1.0)).argmax())
        what = (f"{int(finite_off.sum())} of {r.numel()} result elements off by more than the tolerance and the "
                f"error floor, the worst {_at(i, c)} = {float(o[i]):.7g} (reference {float(r[i]):.7g})")
        severity = VARIANTS[variant][1]
        if severity != INFO and nan_met():
            return (f"with {said} {what}, where the reference computes a NaN on its way: the finite value it gives "
                    f"there is its convention (a NaN cast to an integer, a selection among NaN)")
        if severity == INFO:  # rounding at a dynamic range the fixed tolerances were not stated for
            return f"with {said} {what} (rounding at a range of magnitudes: the row's overflow is what is judged)"
        why = "" if severity == ERROR else (" (a warning: IEEE 754 fixes no result for a selection with an Inf "
                                            "among its values: which element a max, an argmax or a sort takes)")
        return ctx.finding("P207", f"with {said}: {what}{why}"[:500], severity=severity, sizes=dict(ctx.target.sizes),
                           defect=ONE_SIGN_DEFECT if variant in ONE_SIGN else "")
    lost = ~rf & of
    other = ~rf & ~of & ~((torch.isnan(o) & torch.isnan(r)) | (o == r))
    if bool(lost.any()):
        i = int(lost.nonzero()[0])
        return (f"with {said} the kernel gives finite values where the float64 reference is non-finite "
                f"({int(lost.sum())} elements, first {_at(i, c)} = {float(o[i]):.7g}, reference {float(r[i])}): a "
                f"guard the reference lacks, or a NaN a max drops")
    if bool(other.any()):
        i = int(other.nonzero()[0])
        return (f"with {said} the kernel and the reference differ in which non-finite value ({_at(i, c)} = "
                f"{float(o[i])}, reference {float(r[i])})")
    return None


def atol_scale(inputs: dict, name: str) -> float:
    """How many times larger the large row of ``inputs[name]`` is than the row as made (``large_value`` over its
    largest finite magnitude; 1 where that is 0): a TOLERANCE the file declares is stated at the data it makes,
    and its absolute part means k times as much at data k times larger (a quantizer's step is its row's absmax
    over 127: 2.1 at 266). The relative part and the error floor follow the values themselves; the dtype's own
    tolerance already follows the reference's magnitude (``target.magnitude``)."""
    import torch

    t = inputs[name]
    return _times(inputs, name, large_value(t.dtype, largest_dim(inputs)))


def _times(inputs: dict, name: str, big: float | None) -> float:
    """How many times larger a row of largest magnitude ``big`` is than the first row of ``inputs[name]`` as made
    (1 where that row is 0, or ``big`` is None or not larger)."""
    import torch

    row = _row(inputs[name])[0].detach().double()
    row = row[torch.isfinite(row)]
    m = float(row.abs().max()) if row.numel() else 0.0
    return big / m if big is not None and m > 0 and big > m else 1.0


def tame_value(dtype) -> float:
    """Half ln(M) of the narrowest format an input of ``dtype`` may be computed in (``narrowest_of``): 44.4 for
    float32 and bf16, 5.5 for fp16, 355 for float64. A row of that magnitude overflows no ``exp``, and its
    squares and products stay far inside the format; it still passes the thresholds formulas keep for large
    values (softplus's 20 in float32)."""
    import math

    import torch

    return math.log(float(torch.finfo(narrowest_of(dtype)).max)) / 2


def below_overflow(ctx, inputs: dict, name: str) -> str:
    """For finite values off at the large row of ``inputs[name]``: the kernel run again with that row at
    ``tame_value``'s magnitude, where no intermediate overflows. Off there too: no overflow is the cause, and
    the finding says so (``BRANCH``: the diagnosis's "large-values"); right there: an intermediate overflows
    between the two magnitudes (its "magnitude"); where it could not be run (the budget's end, the reference
    raising there), that it was not (``UNTOLD``: "large-row", which claims neither)."""
    import torch

    from harness.probe import execute as X

    if ctx.late():
        return UNTOLD_SAID
    v = tame_value(inputs[name].dtype)
    given = X.clone_inputs(inputs)
    if _place(given, name, "large", magnitude=v) is None:
        return UNTOLD_SAID
    try:
        r = X.reference(ctx.target, given)
    except Exception:  # noqa: BLE001  the reference's domain
        return UNTOLD_SAID
    with ctx.instrument(poison_masked=False):
        c = ctx.call(X.clone_inputs(given), ref=r)
    if c.error is not None or c.out is None or c.out.numel() != c.ref.numel():
        return UNTOLD_SAID
    o, rr = c.out.reshape(-1).double(), c.ref.reshape(-1).double()
    times = _times(inputs, name, v)
    off = torch.isfinite(rr) & (~torch.isfinite(o) | _tolerance_mask(ctx, c, o, rr, r, times, amplified(inputs, times)))
    if c.cmp.get("close") or not bool(off.any()):  # judged as the large row was (``amplified``)
        return f"; right with the row at largest magnitude {v:.3g}, where nothing overflows: an intermediate overflows"
    return f"; off with the row at largest magnitude {v:.3g} too, where nothing overflows: {BRANCH}"


def partial(ctx) -> list:
    """The budget's end stopped it in a run: the findings so far."""
    return kept_so_far(ctx, "special_now")


P207 = Code("P207", ERROR, "wrong with special values put into an input the reference reads (a row of zeros, a row "
                           "of large finite values, a row of one sign, +inf, -inf or NaN in one element): NaN or Inf where the float64 "
                           "reference is finite (an overflow a stable formula avoids, a 0/0 the reference guards, a "
                           "NaN that leaks into other rows), or finite values beyond the error floor",
            ("softmax-no-max-subtraction", "padding-division-by-zero"),
            otherwise="a warning for finite values off at a NaN or Inf input (IEEE fixes no result for a selection "
                      "among them) and for NaN/Inf at elements whose reference or whose kernel result depends on the "
                      "NaN or Inf put in (it propagates through a shared row/group value such as a scale: a "
                      "quantizer's absmax) or where whether the kernel's does was not tried (the budget's end), or "
                      "that reach, past what depends on the value, only elements holding no data (0 in the reference "
                      "there and at the default run, as in the kernel's: the output's padding, through a product with "
                      "0); info for "
                      "finite values off where the reference "
                      "computes a NaN on its way, where the kernel is finite and the reference not, where they differ "
                      "in which non-finite value, and where the reference or the launcher raises on the value (its "
                      "domain)")


# Where it runs in its process: the detectors of one process share one budget's end, and the shorter first lets
# more of them end before it. On a GPU its runs are the default launch's own specialization (the same shapes,
# strides, dtypes and constants: no compilation, milliseconds a launch, at most MAX_RUNS and two more), where
# each layout a launch is given is a new one to compile (seconds): so it runs right after the reference there,
# before guards and layout (``order``). On the interpreter no launch compiles, each costs what an interpreted
# launch costs, and it is no shorter than memcheck, race, order or scalars (the CPU board's rows: a median of
# 1.3 s against 0.3-0.7 s): its place there is unchanged (after them, rank 5).
DETECTOR = Detector("special", "the default sizes with special values in the float inputs (zeros, large, inf, NaN)",
                    run, backends=backends(GPU_SIDE), process={"interpreter": 1, "gpu": 0}, rank=5,
                    order={"gpu": 0.5}, skip=_skip, partial=partial, codes=(P207,))
