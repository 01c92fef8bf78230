"""The probe's layout detector (issue #37): the default sizes with each input the reference reads given
again, same values, as a slice of a wider buffer, a transposed view or a strided vector; how wrong is
wrong is read from what the launcher passes the kernel (harness/probe/detectors/layout.py)."""

from __future__ import annotations

import textwrap
import tomllib
from pathlib import Path

import pytest

from harness import probe

ROOT = Path(__file__).resolve().parents[1]
CASE = ROOT / "cases" / "noncontiguous-input"

# the case's kernels, called the way a user's probe file would: x made contiguous, as most callers pass it
USER = f"""
import importlib.util

import torch
import triton
import triton.language as tl


def _module(name):
    spec = importlib.util.spec_from_file_location("nc_" + name, {str(CASE)!r} + "/" + name + ".py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


broken, fixed = _module("broken"), _module("fixed")


def launch(x, out, alpha):
    return broken.scale(x, out, alpha)


def launch_fixed(x, out, alpha):
    return fixed.scale(x, out, alpha)


def launch_asserts(x, out, alpha):
    assert x.is_contiguous(), "x must be contiguous"
    return broken.scale(x, out, alpha)


def launch_copies(x, out, alpha):
    return broken.scale(x.contiguous(), out, alpha)


@triton.jit
def rows_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out, USE_STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    start = r * stride_x if USE_STRIDE else r * n_cols  # the second: the stride passed, then ignored
    v = tl.load(x_ptr + start + c, mask=c < n_cols)
    tl.store(out_ptr + r * stride_out + c, v * 0.5, mask=c < n_cols)


def launch_rows(x, out, alpha):  # the row stride passed and used; the columns taken as contiguous
    rows_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), USE_STRIDE=True, BLOCK=64)
    return out


def launch_rows_ignored(x, out, alpha):
    rows_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), USE_STRIDE=False, BLOCK=64)
    return out


@triton.jit
def scale_flat(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 0.5, mask=offs < n)


def launch_in_place(x, out, alpha):  # x is scaled in place: an argument read and written
    scale_flat[(triton.cdiv(x.numel(), 1024),)](x, x.numel(), BLOCK=1024)


def launch_in_place_safe(x, out, alpha):
    x.mul_(alpha)


def make_inputs(*, device, gen, rows=20, cols=40):
    return {{"x": torch.randn(rows, cols, generator=gen).to(device),
             "out": torch.full((rows, cols), -7.0, device=device), "alpha": 0.5}}


def reference(x, alpha):
    return x.double() * alpha
"""


@pytest.fixture
def user(tmp_path):
    path = tmp_path / "user_scale.py"
    path.write_text(textwrap.dedent(USER))
    return str(path)


def _layout(path, launcher):
    return probe(path, launcher=launcher, backends=["interpreter"], detectors=["layout"], jobs=1)


def test_the_case_kernel_read_as_contiguous_is_named_by_the_layout_it_meets(user):
    r = _layout(user, "launch")
    found = r.by_code("P206")
    assert [f.severity for f in found] == ["warning", "warning"], r.text()
    assert "'x' is a slice of a wider buffer (rows padded): stride (56, 1)" in found[0].message, found[0].message
    assert "'x' is a transposed (column-major) view: stride (1, 36)" in found[1].message, found[1].message
    assert "passes none of the strides of 'x'" in found[0].message
    first = r.diagnosis[0]
    assert (first["defect"], first["case"]) == ("stride-assumption", "noncontiguous-input"), r.diagnosis
    assert r.ok  # a warning: right for what make_inputs gives, wrong for a view the launcher never checks


def test_the_default_probe_names_the_stride_assumption_first(user):
    """Every detector at its defaults, as a user runs it: only the layout detector sees anything."""
    r = probe(user, backends=["interpreter"])
    assert {f.detector for f in r.problems} == {"layout"}, r.text()
    assert r.diagnosis[0]["defect"] == "stride-assumption" and r.diagnosis[0]["case"] == "noncontiguous-input"
    fixed = probe(user, launcher="launch_fixed", backends=["interpreter"])
    assert not fixed.problems and not fixed.diagnosis, fixed.text()


@pytest.mark.parametrize("launcher", ["launch_fixed", "launch_copies", "launch_rows_ignored"])
def test_a_kernel_that_handles_or_copies_the_layout_is_quiet_and_one_that_drops_a_stride_it_is_given_is_an_error(
        user, launcher):
    r = _layout(user, launcher)
    if launcher != "launch_rows_ignored":
        assert r.findings == [] and r.ok, r.text()
        return
    errors = r.errors
    assert len(errors) == 1 and "slice of a wider buffer" in errors[0].message, r.text()
    assert "passes the kernel the strides of that layout" in errors[0].message


def test_a_launcher_that_refuses_a_view_gives_a_note_only(user):
    r = _layout(user, "launch_asserts")
    assert not r.problems and [f.severity for f in r.by_code("P206")] == ["info"], r.text()
    assert "the launcher raised when 'x' is" in r.by_code("P206")[0].message
    assert "AssertionError: x must be contiguous" in r.by_code("P206")[0].message


def test_a_row_stride_without_a_column_stride_is_tritons_convention_a_note(user):
    r = _layout(user, "launch_rows")
    assert not r.problems, r.text()
    note = r.by_code("P206")
    assert len(note) == 1 and "transposed" in note[0].message and "row stride of 'x' and not its column stride" \
        in note[0].message, r.text()


def test_an_in_place_argument_is_laid_out_too_and_judged_on_its_values(user):
    bad = _layout(user, "launch_in_place")
    assert [f.severity for f in bad.by_code("P206")] == ["warning", "warning"], bad.text()
    safe = _layout(user, "launch_in_place_safe")
    assert safe.findings == [], safe.text()


def test_an_output_buffer_the_reference_never_reads_is_left_as_made(user, monkeypatch):
    import torch

    from harness.probe.detectors import layout

    inputs = {"x": torch.zeros(4, 5), "out": torch.zeros(4, 5), "alpha": 0.5, "idx": torch.zeros(3, dtype=torch.long)}

    class T:
        @staticmethod
        def reference(x, alpha, idx):
            return x

    assert layout.candidates(T, inputs) == ["x", "idx"]
    given, done = layout._relaid(inputs, ["x", "idx"], ("row-padded", "strided"))
    assert done == [("x", "row-padded"), ("idx", "strided")]
    assert given["x"].stride() == (21, 1) and given["idx"].stride() == (4,) and given["out"] is inputs["out"]
    assert torch.equal(given["x"], inputs["x"])  # the same values
    t, _ = layout._relaid({"w": torch.randn(6, 3)}, ["w"], ("transposed",))
    assert t["w"].stride() == (1, 22) and not t["w"].is_contiguous()


def test_it_stops_at_its_deadline_with_a_note(user, monkeypatch):
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from harness.probe.budget import Budget, ManualClock
    from harness.probe.context import Context
    from harness.probe.detectors import layout
    from harness.probe.target import load

    clock = ManualClock()
    t = load(user, None, "launch", "interpreter", str(Path(user).parent))
    ctx = Context(t, "interpreter", 0, "layout", budget=Budget(clock=clock))
    ctx.budget.deadline = clock.t + 1.5
    plain = ctx.call
    ctx.call = lambda *a, **k: (clock.sleep(1.0), plain(*a, **k))[1]  # each launch takes a second
    found = layout.run(ctx)  # the contiguous run, then the row-padded one; the transposed one is past it
    assert [f.code for f in found] == ["P206", "P000"], [f.message for f in found]
    assert "slice of a wider buffer" in found[0].message and "layout stopped" in found[1].message
    assert found[1].severity == "info"
    # stopped by the budget's end inside a run (BudgetSpent): what it found before that run is kept
    ctx.board.layout_now = found[:1]
    assert layout.partial(ctx) == found[:1] and ctx.board.layout_now is None


def _cases_with_a_fixed_kernel():
    for folder in sorted(p for p in (ROOT / "cases").iterdir() if (p / "case.toml").is_file()):
        if (folder / "fixed.py").is_file():
            yield folder.name


def test_no_fixed_kernel_of_the_casebook_is_called_wrong():
    """No error on any case's fixed kernel: those that take a matrix as contiguous without a word get a
    warning (rng-offset-overflow and store-then-load-no-barrier, at this writing), the others a note or
    nothing. The broken kernel of noncontiguous-input is given a transposed x by its own make_inputs (the
    reference detector's P201): the detector has nothing left to vary there."""
    errors, warned = {}, set()
    for slug in _cases_with_a_fixed_kernel():
        folder = ROOT / "cases" / slug
        spec = tomllib.loads((folder / "case.toml").read_text(encoding="utf-8"))
        r = probe(str(folder / "fixed.py"), inputs=str(folder / "case.py"), launcher=spec["launcher"],
                  backends=["interpreter"], detectors=["layout"], jobs=1)
        if r.errors:
            errors[slug] = [f.message for f in r.errors]
        if r.warnings:
            warned.add(slug)
    assert not errors, errors
    assert {"rng-offset-overflow", "store-then-load-no-barrier"} <= warned, warned  # 2-D, no strides passed
