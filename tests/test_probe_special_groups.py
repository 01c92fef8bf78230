"""The special-value detector (harness/probe/detectors/special.py) on a per-token-group fp8 quantizer, our own
(tests/probe_fixtures/special/): +inf in one element of a group makes the group's absmax and scale Inf and every
other element of the group 0 * inf = NaN dequantized, where a float64 reference that does not quantize is finite.
That is IEEE propagation through a value the kernel shares over the group (a warning), never a leak, whether the
Inf goes straight into the absmax (x itself) or through a product first (silu(gate) * up with the Inf in up,
where a value of the data's order, silu(gate) * (2 max + 1), does not win the group's absmax), and whether the
result has rows to close over or is one vector. A kernel whose masked-off lanes read another token's group and
add it times 0 (NaN in groups that depend on no element put in) stays an error."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from harness import probe
from harness.probe.diagnosis import SPECIAL_PROPAGATES
from test_probe_special import _Target  # noqa: PLC2701  tests/ is on the path: what _judge reads of a target

HERE = Path(__file__).parent / "probe_fixtures" / "special"


def _special(name, launcher):
    return probe(str(HERE / name), launcher=launcher, backends=["interpreter"], detectors=["special"], jobs=1,
                 budget=0)  # no budget: what is judged is the severity, never how fast this machine is today


@pytest.mark.parametrize("name,launcher,at", [
    ("group_quant.py", "quant", "x[0, 256]"),  # the Inf straight into the group's absmax
    ("silu_mul_quant.py", "silu_mul_quant", "x[0, 512]"),  # in up[0, 0]: silu(gate) * inf
    ("silu_mul_quant.py", "silu_mul_quant_colmajor", "x[0, 512]"),  # the scales stored column-major
    # one vector: no output row to close over, and silu(gate[0, 0]) * (2 max + 1) = -2.5 loses the group's
    # absmax 5.3; before the dominant value this was an error ("it leaked")
    ("silu_mul_quant_flat.py", "silu_mul_quant_flat", "x[0, 512]"),
])
def test_an_inf_in_a_quantizers_group_reaches_its_scale_a_warning_not_a_leak(name, launcher, at):
    r = _special(name, launcher)
    found = r.by_code("P207")
    assert not [f for f in found if f.severity == "error"], r.text()
    for sign in "+-":
        warned = [f for f in found if f.message.startswith(f"with {sign}inf in one element in 'x' ({at})")]
        assert warned and warned[0].severity == "warning", r.text()
        # the other 127 elements of the group (the element itself is Inf in the reference too)
        assert "127 of 4096 result elements NaN/Inf" in warned[0].message, warned[0].message
        assert SPECIAL_PROPAGATES in warned[0].message, warned[0].message
    assert not [d for d in r.diagnosis if d.get("defect")], r.diagnosis
    assert r.ok
    assert [st for _, d, _, st in r.ran if d == "special" and st.startswith("done")], r.ran


@pytest.mark.parametrize("name,launcher,at", [
    ("group_quant.py", "quant_leaky", "x[0, 256]"),
    ("silu_mul_quant_flat.py", "silu_mul_quant_flat_leaky", "x[0, 512]"),
])
def test_a_masked_lane_reading_another_tokens_group_times_0_stays_a_leak(name, launcher, at):
    """Every token's group reads token 0's (its masked-off lanes, times 0): a NaN or Inf there makes the group
    of the 7 other tokens NaN, 896 elements that depend on it neither in the reference nor in the kernel (0
    times any finite value, the dominant value too, is 0): an error, named padding-contamination."""
    r = _special(name, launcher)
    errors = [f for f in r.by_code("P207") if f.severity == "error"]
    for start in ("NaN", "+inf", "-inf"):
        hit = [f for f in errors if f.message.startswith(f"with {start} in one element in 'x' ({at})")]
        assert hit and "896 of 4096 result elements NaN/Inf" in hit[0].message and "it leaked" in hit[0].message, \
            r.text()
    assert r.diagnosis[0]["defect"] == "padding-contamination", r.diagnosis
    assert not r.ok


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
@pytest.mark.parametrize("n", [1, 128, 1024, 2 ** 20])
def test_the_dominant_value_keeps_n_of_its_squares_finite(dtype, n):
    """``dominant_value``: its square, n times over, fits the narrowest format a correct kernel of the input
    computes in, and it is a value of the input's dtype; float32 and bf16 data at the sizes a user probes get one
    far above the data (a group's absmax, lost by silu(gate) * (2 max + 1), is won by silu(gate) * it)."""
    from harness.probe.detectors import special

    x = torch.randn(4, n if n <= 1024 else 4, generator=torch.Generator().manual_seed(0)).to(dtype)
    v = special.dominant_value(x, n)
    top = float(torch.finfo(special.narrowest_of(dtype)).max)
    assert v * v * n <= top * (1 + 1e-9)
    assert v <= float(torch.finfo(dtype).max)
    if dtype in (torch.float32, torch.bfloat16) and n <= 2 ** 20:
        assert 0.01 * v > 1e6 * special.moving_value(x)


def test_at_the_dominant_value_only_finite_moves_show_a_dependence():
    """An intermediate the dominant value makes overflow, times 0 in a masked lane, is NaN: not evidence that the
    element depends on it (``_moved(finite=True)``); at the value of the data's order it is, as before."""
    from harness.probe.detectors import special
    from harness.probe.execute import Call

    base = torch.tensor([1.0, 1.0, 1.0, 5.0], dtype=torch.float64)
    run = torch.tensor([1.0 + 1e-7, 2.0, float("nan"), 5.0], dtype=torch.float64)
    c = Call(out=torch.zeros(4))
    assert special._moved(c, run, base).tolist() == [False, True, True, False]
    assert special._moved(c, run, base, finite=True).tolist() == [False, True, False, False]


@pytest.mark.parametrize("mine,severity,words", [
    (None, "warning", "was not tried"),  # the budget's end before the kernel's runs: no leak shown
    ([False] * 4, "error", "it leaked"),  # the kernel's runs made, nothing moved there: a leak
    ([True, True, False, False], "warning", SPECIAL_PROPAGATES),  # they moved: propagation
])
def test_a_leak_is_an_error_only_where_the_kernels_own_dependence_was_tried(mine, severity, words):
    from harness.probe.context import Context
    from harness.probe.detectors import special
    from harness.probe.execute import Call

    ctx = Context(_Target, "interpreter", 0, "special")
    base = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    ref = torch.tensor([float("inf"), 2.0, 3.0, 4.0], dtype=torch.float64)  # +inf put into element 0
    c = Call(out=torch.tensor([float("nan"), float("nan"), 3.0, 4.0]), ref=ref, cmp={"close": False})
    moves = lambda: None if mine is None else torch.tensor(mine)  # noqa: E731
    f = special._judge(ctx, c, ref, "+inf", "+inf in one element", lambda: [], lambda: False, base=base,
                       moves=moves)
    assert f.severity == severity and words in f.message, f.message
    assert "1 of 4 result elements" in f.message, f.message
