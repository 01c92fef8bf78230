"""The probe's layout detector (issue #37): the default sizes with each input the reference reads given
again, same values, as a slice of a wider buffer, a transposed view or a strided vector; how wrong is
wrong is read from what the launcher passes the kernel (harness/probe/detectors/layout.py)."""

from __future__ import annotations

import contextlib
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


def _written(tmp_path, name: str, source: str) -> str:
    """A user's probe file of ``source`` in ``tmp_path``: its path."""
    path = tmp_path / f"user_{name}.py"
    path.write_text(textwrap.dedent(source))
    return str(path)


@pytest.fixture
def user(tmp_path):
    return _written(tmp_path, "scale", USER)


def _layout(path, launcher):  # no budget: a busy machine's clock cuts no launch (each verdict rests on all of them)
    return probe(path, launcher=launcher, backends=["interpreter"], detectors=["layout"], jobs=1, budget=0)


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
    # (P406: the kernels' int32 row offsets, r * stride, a hazard past 2**31 elements the large detector names)
    assert {f.detector for f in r.problems if f.code != "P406"} == {"layout"}, r.text()
    assert r.diagnosis[0]["defect"] == "stride-assumption" and r.diagnosis[0]["case"] == "noncontiguous-input"
    fixed = probe(user, launcher="launch_fixed", backends=["interpreter"])
    assert not [f for f in fixed.problems if f.code != "P406"] and fixed.ok, fixed.text()


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
    # scaled as numel flat elements: the row-padded view's gaps are rewritten (x * 0.5 of what they hold), an
    # error seen with the gaps finite (their NaN poison scaled is the same NaN); the transposed view has no gaps
    # inside its span to write: the stride rules' warning
    assert [f.severity for f in bad.by_code("P206")] == ["error", "warning"], bad.text()
    assert "wrote into the view's gaps" in bad.by_code("P206")[0].message
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
    assert given["x"].stride() == (21, 1) and given["idx"].stride() == (5,) and given["out"] is inputs["out"]
    assert torch.equal(given["x"], inputs["x"])  # the same values
    t, _ = layout._relaid({"w": torch.randn(6, 3)}, ["w"], ("transposed",))
    assert t["w"].stride() == (1, 22) and not t["w"].is_contiguous()
    # a row stride that would be a power of two (48 + 16: a block size's number) or an integer the contiguous
    # launch got is passed over for the next padding
    w = torch.randn(4, 48)
    assert layout._relaid({"w": w}, ["w"], ("row-padded",))[0]["w"].stride() == (80, 1)
    assert layout._relaid({"w": w}, ["w"], ("row-padded",), frozenset({80}))[0]["w"].stride() == (96, 1)


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


# Kernels of our own for the layouts torch code produces beyond a row slice and a transpose (issue #37): leading
# dims permuted (a (batch, seq, hidden) tensor stored seq-major), a packed buffer's interleaved columns
# (packed[..., 1::k]) and a broadcast read-only matrix (bias.expand(rows, -1)). Each: a kernel that is given
# the strides of that layout and still misreads it (an error), its correct twin (quiet), and a launcher that
# refuses the layout (a note) or follows the row-stride convention (a note).
MORE = """
import torch
import triton
import triton.language as tl


@triton.jit
def rows3_kernel(x_ptr, out_ptr, S, H, sxb, sxs, sob, sos, BATCH_STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    s = tl.program_id(1)
    c = tl.arange(0, BLOCK)
    # the batch stride passed and used, or passed and then taken as S rows of the row stride
    start = b * sxb + s * sxs if BATCH_STRIDE else (b * S + s) * sxs
    v = tl.load(x_ptr + start + c, mask=c < H)
    tl.store(out_ptr + b * sob + s * sos + c, v * 2.0, mask=c < H)


@triton.jit
def rows2_kernel(x_ptr, out_ptr, H, sx, so, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + r * sx + c, mask=c < H)
    tl.store(out_ptr + r * so + c, v * 2.0, mask=c < H)


def _rows3(x, out, batch_stride):
    B, S, H = x.shape
    rows3_kernel[(B, S)](x, out, S, H, x.stride(0), x.stride(1), out.stride(0), out.stride(1),
                         BATCH_STRIDE=batch_stride, BLOCK=32)
    return out


def launch_permuted_right(x, out):
    return _rows3(x, out, True)


def launch_permuted_wrong(x, out):  # given x.stride(0), then ignores it
    return _rows3(x, out, False)


def _flat(x, out, how):
    H = x.shape[-1]
    x2 = x.view(-1, H) if how == "view" else x.reshape(-1, H) if how == "reshape" else x
    o2 = out.view(-1, H)
    rows2_kernel[(o2.shape[0],)](x2, o2, H, x2.stride(-2), o2.stride(0), BLOCK=32)
    return out


def launch_flat_view(x, out):  # x.view(-1, H): torch refuses a permuted view
    assert x.stride(-1) == 1, "x: the last dim must be contiguous"
    return _flat(x, out, "view")


def launch_flat_reshape(x, out):  # x.reshape(-1, H): torch copies a permuted view
    return _flat(x, out, "reshape")


def launch_flat_row_stride(x, out):  # one row stride for every leading dim: the row-stride convention
    return _flat(x, out, "stride")


def make_inputs(*, device, gen, batch=3, seq=5, hidden=24):
    return {"x": torch.randn(batch, seq, hidden, generator=gen).to(device),
            "out": torch.empty(batch, seq, hidden, device=device)}


def reference(x):
    return x.double() * 2.0
"""

COLS = """
import torch
import triton
import triton.language as tl


@triton.jit
def cols_kernel(x_ptr, out_ptr, n_cols, sxr, sxc, so, COL_MAJOR: tl.constexpr, USE_COL: tl.constexpr,
                BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    # a column-major path where stride(0) == 1, else the column stride (passed) used, or taken as 1
    offs = r * sxr + c * sxc if COL_MAJOR or USE_COL else r * sxr + c
    v = tl.load(x_ptr + offs, mask=c < n_cols)
    tl.store(out_ptr + r * so + c, v - 1.0, mask=c < n_cols)


def _cols(x, out, use_col):
    cols_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), x.stride(1), out.stride(0),
                               COL_MAJOR=x.stride(0) == 1, USE_COL=use_col, BLOCK=64)
    return out


def launch_cols_right(x, out):
    return _cols(x, out, True)


def launch_cols_wrong(x, out):  # handles a transposed view, and takes any other as last-dim contiguous
    return _cols(x, out, False)


def launch_cols_asserts(x, out):
    assert x.stride(-1) == 1, "x: the last dim must be contiguous"
    return _cols(x, out, True)


def make_inputs(*, device, gen, rows=12, cols=40):
    return {"x": torch.randn(rows, cols, generator=gen).to(device), "out": torch.empty(rows, cols, device=device)}


def reference(x):
    return x.double() - 1.0
"""

BIAS = """
import torch
import triton
import triton.language as tl


@triton.jit
def bias_kernel(x_ptr, b_ptr, out_ptr, n_rows, n_cols, sx, sb, so, BOUND: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    # BOUND: b's elements bounded by its rows times its row stride (0 for a broadcast b: every lane masked)
    mb = m & (r * sb + c < n_rows * sb) if BOUND else m
    v = tl.load(x_ptr + r * sx + c, mask=m) + tl.load(b_ptr + r * sb + c, mask=mb, other=0.0)
    tl.store(out_ptr + r * so + c, v, mask=m)


def _bias(x, b, out, bound):
    bias_kernel[(x.shape[0],)](x, b, out, x.shape[0], x.shape[1], x.stride(0), b.stride(0), out.stride(0),
                               BOUND=bound, BLOCK=64)
    return out


def launch_bias_right(x, b, out):
    return _bias(x, b, out, False)


def launch_bias_wrong(x, b, out):
    return _bias(x, b, out, True)


def launch_bias_asserts(x, b, out):
    assert b.stride(0) > 0, "b must not be broadcast"
    return _bias(x, b, out, False)


def make_inputs(*, device, gen, rows=12, cols=40):
    return {"x": torch.randn(rows, cols, generator=gen).to(device), "b": torch.randn(rows, cols, generator=gen).to(device),
            "out": torch.empty(rows, cols, device=device)}


def reference(x, b):
    return x.double() + b.double()
"""


@pytest.fixture
def more(tmp_path):
    return _written(tmp_path, "more", MORE)


@pytest.fixture
def cols(tmp_path):
    return _written(tmp_path, "cols", COLS)


@pytest.fixture
def bias(tmp_path):
    return _written(tmp_path, "bias", BIAS)


# an in-place update of a (batch, seq, hidden) tensor whose launcher passes the row stride alone and takes the
# leading dims as one row index (what TransformerEngine's cross entropy did with seq-major logits); the fixed one
# passes both leading strides
INPLACE_ROWS = """
import torch
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, stride_b, stride_s, seq, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    p = x_ptr + (row // seq) * stride_b + (row % seq) * stride_s + cols
    tl.store(p, tl.load(p, mask=m, other=0.0) * 2, mask=m)


def launch(x):
    rows = x.numel() // x.shape[-1]  # the rows as one index, seq.stride each
    k[(rows,)](x, x.stride(-2) * x.shape[-2], x.stride(-2), x.shape[-2], x.shape[-1], BLOCK=16)
    return x


def launch_fixed(x):
    rows = x.numel() // x.shape[-1]
    k[(rows,)](x, x.stride(0), x.stride(1), x.shape[-2], x.shape[-1], BLOCK=16)
    return x


def make_inputs(*, device, gen, b=2, s=3, h=16):
    return {"x": torch.randn(b, s, h, generator=gen).to(device)}


def reference(x):
    return x.double() * 2
"""


def test_an_in_place_view_whose_rows_the_launcher_walks_past_is_an_error_under_the_interpreter_as_on_a_gpu(tmp_path):
    """The launcher passes the row stride alone and walks a permuted view's rows as one index: it stores past the
    view. On a GPU the stores land in the guard bands around the view (an error, P206: written through a view,
    outside it); the interpreter's bounds check drops them before they happen, and the run was only a note there.
    The dropped stores now count as the guard bands count them. Its fixed twin is quiet."""
    path = _written(tmp_path, "inplace_rows", INPLACE_ROWS)
    wrong = _layout(path, "launch")
    permuted = [f for f in wrong.errors if "'x' is a view with the two dims before the last permuted" in f.message]
    assert len(permuted) == 1 and "wrote outside" in permuted[0].message, wrong.text()
    right = _layout(path, "launch_fixed")
    assert not right.errors, right.text()


def test_permuted_leading_dims_misread_with_both_strides_given_is_an_error_and_its_twin_quiet(more):
    wrong = _layout(more, "launch_permuted_wrong")
    permuted = [f for f in wrong.errors if "'x' is a view with the two dims before the last permuted" in f.message]
    assert len(permuted) == 1, wrong.text()  # (a broadcast x is misread by the same ignored stride: an error too)
    assert "passes the kernel the strides of that layout" in permuted[0].message
    assert wrong.diagnosis[0]["defect"] == "stride-assumption", wrong.diagnosis
    right = _layout(more, "launch_permuted_right")  # the last dim taken as contiguous: a transposed x is a note
    assert not right.problems and not [f for f in right.findings if "permuted" in f.message], right.text()


def test_permuted_leading_dims_flattened_view_refuses_reshape_copies_one_row_stride_is_the_convention(more):
    view = _layout(more, "launch_flat_view")
    notes = view.by_code("P206")
    assert not view.problems and [f.severity for f in notes] == ["info"], view.text()
    assert "the launcher raised when" in notes[0].message and "permuted" in notes[0].message, notes[0].message
    reshape = _layout(more, "launch_flat_reshape")  # (an interleaved x stays a view: its column stride a note)
    assert not reshape.problems and not [f for f in reshape.findings if "permuted" in f.message], reshape.text()
    flat = _layout(more, "launch_flat_row_stride")
    assert not flat.problems, flat.text()
    permuted = [f for f in flat.by_code("P206") if "permuted" in f.message]
    assert len(permuted) == 1 and permuted[0].severity == "info", flat.text()
    assert "passes the row stride of 'x' and not the strides of the dims before" in permuted[0].message


def test_interleaved_columns_misread_with_the_column_stride_given_is_an_error_and_its_twin_quiet(cols):
    wrong = _layout(cols, "launch_cols_wrong")
    found = wrong.by_code("P206")
    assert [f.severity for f in found] == ["error"], wrong.text()  # right row-padded and transposed
    assert "'x' is a column slice of a packed buffer (packed[..., 1::k]): stride (120, 3)" in found[0].message
    right = _layout(cols, "launch_cols_right")
    assert right.findings == [], right.text()
    refused = _layout(cols, "launch_cols_asserts")
    assert not refused.problems and [f.severity for f in refused.by_code("P206")] == ["info"], refused.text()
    assert "x: the last dim must be contiguous" in refused.by_code("P206")[0].message


def test_a_broadcast_input_misread_with_its_row_stride_given_is_an_error_and_its_twin_quiet(bias):
    """(Both kernels take the last dim as contiguous: a transposed x or b is a note.)"""
    wrong = _layout(bias, "launch_bias_wrong")
    assert len(wrong.errors) == 1 and not wrong.warnings, wrong.text()
    assert "'b' is an expanded (broadcast) view, its first row repeated: stride (0, 1)" in wrong.errors[0].message
    assert "passes the kernel the strides of that layout, as again in a row-padded run at stride (" in \
        wrong.errors[0].message, wrong.errors[0].message  # b's row stride passed in both row-padded runs
    right = _layout(bias, "launch_bias_right")  # x expanded too: read right by its stride 0
    assert not right.problems and not [f for f in right.findings if "broadcast" in f.message], right.text()
    refused = _layout(bias, "launch_bias_asserts")
    assert not refused.problems, refused.text()
    assert [f for f in refused.by_code("P206") if "b must not be broadcast" in f.message], refused.text()


def test_a_broadcast_is_tried_only_where_the_reference_reads_it_as_its_values(tmp_path):
    """A reference that writes into the input (torch refuses an expanded tensor there) does not take a
    broadcast: the kernel that misreads one is then not tried with it."""
    path = tmp_path / "user_cols_in_place.py"
    path.write_text(textwrap.dedent(BIAS).replace("x.double() + b.double()", "x.double() + b.mul_(1.0).double()"))
    r = _layout(str(path), "launch_bias_wrong")
    assert not r.problems and not [f for f in r.findings if "broadcast" in f.message], r.text()


def test_the_gpu_side_is_one_switch():
    from harness.probe.detectors import layout, on

    assert layout.backends(True) == ("interpreter", "gpu") and layout.backends(False) == ("interpreter",)
    assert layout.DETECTOR.backends == layout.backends(layout.GPU_SIDE)
    assert ("layout" in [d.name for d in on("gpu")]) == layout.GPU_SIDE


def test_the_guard_bands_keep_a_broadcast_view_broadcast_with_a_contiguous_tensors_room_after_it():
    """A stride-0 input used to make the guard's copy raise (torch refuses to write one memory location
    twice); now its one row is copied, and the memory a contiguous tensor of its shape takes is poison
    after it, so a kernel that reads it as contiguous reads poison on a GPU too, not past the allocation."""
    import torch

    from harness.probe import execute
    from harness.probe.detectors import layout

    t = torch.randn(1, 5).expand(4, 5)
    band = execute.padded("b", t, 1, pad=8)
    assert band.view.stride() == (0, 1) and torch.equal(band.view, t)
    assert band.base.numel() == 8 + 20 + 8 and band.base[13:28].isnan().all()
    kept = layout._kept({"b": t, "n": 3})
    assert kept["b"].stride() == (0, 1) and torch.equal(kept["b"], t) and kept["n"] == 3


# The launcher's integers are evidence that it passes a layout's strides only where they follow the strides: a
# number the launch got may equal a stride by chance (a count it derives from the row stride, a block count).
# An error rests on a second launch of the same layout with other strides (layout._again). Two kernels of ours:
# one given the row and column strides that misreads the column stride (an error, shown twice), one given the
# row stride only, taking the last dim as contiguous, that also gets a count equal to the packed view's column
# step at these sizes (the row stride's blocks of 48: 120 elements for packed[..., 1::3] at 40 columns, 3
# blocks): the convention's note, as for any launcher that passes the row stride alone, not an error.
STEPS = """
import torch
import triton
import triton.language as tl


@triton.jit
def twice_kernel(x_ptr, out_ptr, n_cols, sxr, sxc, so, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + r * sxr * sxc + c * sxc, mask=c < n_cols)  # the row offset scaled by the column stride too
    tl.store(out_ptr + r * so + c, v + 3.0, mask=c < n_cols)


@triton.jit
def counted_kernel(x_ptr, out_ptr, n_cols, sxr, so, n_chunks, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + r * sxr + c, mask=c < n_cols)  # the last dim taken as contiguous
    tl.store(out_ptr + r * so + c, v + 3.0 + 0.0 * n_chunks, mask=c < n_cols)


def launch_twice(x, out):
    twice_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), x.stride(1), out.stride(0), BLOCK=64)
    return out


def launch_counted(x, out):
    if x.stride(0) == 1:  # a column-major view copied; any other taken as last-dim contiguous
        x = x.contiguous()
    counted_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), out.stride(0), triton.cdiv(x.stride(0), 48),
                                  BLOCK=64)
    return out


def make_inputs(*, device, gen, rows=12, cols=40):
    return {"x": torch.randn(rows, cols, generator=gen).to(device), "out": torch.empty(rows, cols, device=device)}


def reference(x):
    return x.double() + 3.0
"""


# An argument the launch changes in place (issue #37: vllm's top-k/top-p sampler masked its logits in place
# with rows at r * vocab): a kernel of our own that zeroes each row's negative values in place, its rows found at
# r * n_cols (the tensor taken as contiguous, nothing passed, nothing said), and its twin given both strides.
# Given a slice of a wider buffer, the first writes into the view's gaps (another tensor's elements in the
# caller's buffer): an error whatever the launcher passes; the same assumption on an input it only reads stays
# the warning of a view taken as contiguous.
INPLACE = """
import torch
import triton
import triton.language as tl


@triton.jit
def relu_rows(x_ptr, out_ptr, n_cols, sxr, sxc, sor, soc, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    v = tl.load(x_ptr + r * sxr + c * sxc, mask=m)
    tl.store(out_ptr + r * sor + c * soc, tl.where(v > 0, v, 0.0), mask=m)


def _go(x, out, sxr, sxc, sor, soc):
    relu_rows[(x.shape[0],)](x, out, x.shape[1], sxr, sxc, sor, soc, BLOCK=triton.next_power_of_2(x.shape[1]))


def launch_in_place_assumed(x, out):  # rows at r * n_cols, in place: x taken as contiguous
    _go(x, x, x.shape[1], 1, x.shape[1], 1)
    return x


def launch_in_place_strided(x, out):  # the correct twin: x's own strides
    _go(x, x, x.stride(0), x.stride(1), x.stride(0), x.stride(1))
    return x


def launch_read_assumed(x, out):  # the same assumption on an input it only reads (out is its own)
    _go(x, out, x.shape[1], 1, out.stride(0), 1)
    return out


def make_inputs(*, device, gen, rows=6, cols=40):
    return {"x": torch.randn(rows, cols, generator=gen).to(device), "out": torch.empty(rows, cols, device=device)}


def reference(x):
    return x.double().clamp(min=0)
"""


GPU_RUNS = (("user", "launch"), ("user", "launch_fixed"), ("user", "launch_rows_ignored"),
            ("more", "launch_permuted_wrong"), ("more", "launch_permuted_right"), ("cols", "launch_cols_wrong"),
            ("cols", "launch_cols_right"), ("bias", "launch_bias_wrong"), ("bias", "launch_bias_right"),
            ("steps", "launch_twice"), ("steps", "launch_counted"), ("inplace", "launch_in_place_assumed"),
            ("inplace", "launch_in_place_strided"))
SOURCES = {"user": USER, "more": MORE, "cols": COLS, "bias": BIAS, "steps": STEPS, "inplace": INPLACE}


def _gpu_layout_runs(folder) -> dict:
    """Each (file, launcher) of GPU_RUNS probed on the GPU with the layout detector alone: {launcher: report}.
    The files are written into ``folder`` (a path, or a TemporaryDirectory kept alive with the runs). The
    probes run four at a time (each its own worker process, mostly compiling: one after another they
    took 21 s on an H200, the GPU suite's longest piece once the case batch was shorter; issue 40)."""
    from concurrent.futures import ThreadPoolExecutor

    root = Path(getattr(folder, "name", folder))
    paths = {}
    for name, src in SOURCES.items():
        paths[name] = root / f"user_{name}.py"
        paths[name].write_text(textwrap.dedent(src))

    def one(run):
        name, launcher = run
        # no budget (0): what is judged here is the severity, not the time; under the GPU suite's load a 20 s
        # budget left the broadcast's second launch unmade once (H200, 2026-11-29: a warning, "not tried again")
        return launcher, probe(str(paths[name]), launcher=launcher, backends=["gpu"], detectors=["layout"], jobs=1,
                               budget=0)

    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="layout-gpu") as pool:
        return dict(pool.map(one, GPU_RUNS))


def gpu_ahead(items, start):
    """With a GPU, the GPU layout runs start at collection, beside the suite's other GPU work."""
    import tempfile

    if any(item.name.startswith("test_on_a_gpu_the_layouts") for item in items):
        start(("layout-gpu",), _gpu_layout_runs, tempfile.TemporaryDirectory(prefix="casebook-layout-gpu-"))


@pytest.mark.gpu
def test_on_a_gpu_the_layouts_are_judged_alike(ahead, tmp_path):
    """The interpreter's severities on a GPU (the strides a launch is given are read there too; an access
    outside a view reads the guard bands' poison)."""
    r = ahead(("layout-gpu",), _gpu_layout_runs, tmp_path)
    assert [f.severity for f in r["launch"].by_code("P206")] == ["warning", "warning"], r["launch"].text()
    assert r["launch_fixed"].findings == []
    ignored = r["launch_rows_ignored"]
    assert len(ignored.errors) == 1 and "slice of a wider buffer" in ignored.errors[0].message, ignored.text()
    permuted = r["launch_permuted_wrong"]
    assert [f for f in permuted.errors if "permuted" in f.message], permuted.text()
    assert not r["launch_permuted_right"].problems
    interleaved = r["launch_cols_wrong"]
    assert [f.severity for f in interleaved.by_code("P206")] == ["error"], interleaved.text()
    assert r["launch_cols_right"].findings == []
    broadcast = r["launch_bias_wrong"]
    assert len(broadcast.errors) == 1 and "broadcast" in broadcast.errors[0].message, broadcast.text()
    assert not r["launch_bias_right"].problems
    twice = r["launch_twice"]  # the column stride passed and misread: an error, shown by a second launch
    assert len(twice.errors) == 1 and "wrong again at stride" in twice.errors[0].message, twice.text()
    counted = r["launch_counted"]  # a count equal to the packed view's step by chance: the convention's note
    assert not counted.problems and [f.severity for f in counted.by_code("P206")] == ["info"], counted.text()
    gaps = r["launch_in_place_assumed"]  # an in-place argument written into its view's gaps: an error
    # row-padded: an error; transposed (stride(-1) != 1, what nearly every launcher assumes): the warning
    assert [f.severity for f in gaps.by_code("P206")] == ["error", "warning"], gaps.text()
    assert r["launch_in_place_strided"].findings == []


def _fault_finding(monkeypatch, passed_stride: bool, again: bool = True, then: str = "fault"):
    """The layout detector's judgement of one launch that faulted with a strided 1-D index vector given
    (an illegal memory access, as a gather through the misread gaps gives on a GPU); ``again``: whether the
    second launch (the same layout, another step) is given its stride too; ``then``: how that launch ends."""
    import types

    import torch

    from harness.probe.detectors import layout

    found, seen = [], []
    ctx = types.SimpleNamespace(target=types.SimpleNamespace(sizes={"n": 30}), late=lambda: False,
                                finding=lambda code, text, severity, sizes: (code, severity, text))
    x = torch.arange(90, dtype=torch.int32)[::3]
    st = {"base": set(), "row_stride": set(), "dims": {}, "rows": {}, "refused": [], "wrong": {}, "found": found,
          "names": ["x"]}
    fault = RuntimeError("CUDA error: an illegal memory access was encountered")
    c = types.SimpleNamespace(ints={3} if passed_stride else set(), guard={}, cmp={}, error=fault)

    def second(ctx, given, ref):
        seen.append(given["x"].stride())
        return then, types.SimpleNamespace(ints={given["x"].stride(0)} if again else {3}, error=fault)

    monkeypatch.setattr(layout, "_outcome", second)
    layout._judge(ctx, st, "fault", c, {"x": x}, [("x", "strided")], None, {"x": x.contiguous()})
    return found, seen


def test_a_fault_from_a_view_read_as_contiguous_follows_the_stride_rule(monkeypatch):
    """cases/histogram-lost-updates' correct kernel, given a strided index vector its launcher takes as
    contiguous, faulted on an H200 (docs/measurements/layout-gpu-h200.log): the fault is the contiguity
    assumption's doing, a note for a 1-D tensor as a wrong result would be; an error only where the
    launcher passes that layout's stride and still faults, shown by a second launch at another step."""
    ((code, severity, text),), seen = _fault_finding(monkeypatch, passed_stride=False)
    assert code == "P206" and severity == "info" and "illegal memory access" in text and seen == []
    ((code, severity, text),), seen = _fault_finding(monkeypatch, passed_stride=True)
    assert code == "P206" and severity == "error" and "outside memory" in text
    assert seen == [(5,)] and "wrong again at stride (5,)" in text, (seen, text)  # the next odd prime
    ((code, severity, text),), seen = _fault_finding(monkeypatch, passed_stride=True, again=False)
    assert severity == "info" and "equalled a stride by chance (not at stride (5,))" in text, text
    ((code, severity, text),), seen = _fault_finding(monkeypatch, passed_stride=True, then="right")
    assert severity == "info" and "by chance (not at stride (5,), right there)" in text, text


@pytest.fixture
def steps(tmp_path):
    return _written(tmp_path, "steps", STEPS)


def test_a_column_stride_passed_and_misread_is_an_error_shown_by_a_second_launch(steps):
    r = _layout(steps, "launch_twice")
    assert len(r.errors) == 1 and not r.warnings, r.text()
    error = r.errors[0].message
    assert "'x' is a transposed (column-major) view: stride (1, 28)" in error, error
    assert "passes the kernel the strides of that layout, wrong again at stride (1, " in error, error


def test_a_count_that_equals_a_packed_views_column_step_by_chance_is_no_proof_it_is_passed(steps):
    r = _layout(steps, "launch_counted")
    assert not r.problems, r.text()  # right row-padded (its row stride passed) and transposed (copied)
    note, = r.by_code("P206")
    assert note.severity == "info" and "'x' is a column slice of a packed buffer (packed[..., 1::k]): stride " \
        "(120, 3)" in note.message, note.message
    assert "passes the row stride of 'x' and not its column stride" in note.message, note.message
    assert "a number the launch got equalled a stride by chance (not at stride (" in note.message, note.message


# Two tables of one shape read by one stride (issue #37: a rotary kernel given cos's row stride reads sin by it too):
# right for views of one packed buffer, a warning; a kernel that is given cos's stride and ignores it for cos
# itself, an error; where the budget's end leaves no time to try the shared strides, no error either.
ROTARY = """
import torch
import triton
import triton.language as tl


@triton.jit
def rot_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, H, sx, sc, ss, so, OWN_SIN: tl.constexpr, IGNORE: tl.constexpr,
               BLOCK: tl.constexpr):
    r = tl.program_id(0)
    j = tl.arange(0, BLOCK)
    m = j < H
    row_c = r * H if IGNORE else r * sc  # IGNORE: cos's row stride passed, then taken as the row length
    row_s = r * ss if OWN_SIN else r * sc  # not OWN_SIN: sin read by cos's row stride (one stride for both)
    x1 = tl.load(x_ptr + r * sx + 2 * j, mask=m)
    x2 = tl.load(x_ptr + r * sx + 2 * j + 1, mask=m)
    c = tl.load(cos_ptr + row_c + j, mask=m)
    s = tl.load(sin_ptr + row_s + j, mask=m)
    tl.store(out_ptr + r * so + j, x1 * c - x2 * s, mask=m)
    tl.store(out_ptr + r * so + H + j, x2 * c + x1 * s, mask=m)


def _rot(x, cos, sin, own_sin, ignore, pass_sin=True):
    out = torch.empty_like(x)
    rot_kernel[(x.shape[0],)](x, cos, sin, out, cos.shape[1], x.stride(0), cos.stride(0), sin.stride(0) if pass_sin else 0,
                              out.stride(0), OWN_SIN=own_sin, IGNORE=ignore, BLOCK=16)
    return out


def launch_rot_right(x, cos, sin):
    return _rot(x.contiguous(), cos, sin, True, False)


def launch_rot_shared(x, cos, sin):  # right for cos and sin views of one packed buffer: one row stride passed
    return _rot(x.contiguous(), cos, sin, False, False, pass_sin=False)


def launch_rot_told(x, cos, sin):  # sin's row stride passed too, and the kernel reads sin by cos's
    return _rot(x.contiguous(), cos, sin, False, False)


def launch_rot_ignored(x, cos, sin):  # cos's row stride passed, then ignored
    return _rot(x.contiguous(), cos, sin, True, True)


def make_inputs(*, device, gen, rows=6, half=16):
    ang = torch.rand(rows, half, generator=gen) * 3.0
    return {"x": torch.randn(rows, 2 * half, generator=gen).to(device), "cos": torch.cos(ang).to(device),
            "sin": torch.sin(ang).to(device)}


def reference(x, cos, sin):
    x, c, s = x.double(), cos.double(), sin.double()
    x1, x2 = x[:, 0::2], x[:, 1::2]
    return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=1)
"""


@pytest.fixture
def rotary(tmp_path):
    return _written(tmp_path, "rotary", ROTARY)


def test_a_table_read_by_its_twins_stride_is_a_warning_and_a_stride_passed_then_ignored_an_error(rotary):
    shared = _layout(rotary, "launch_rot_shared")
    assert not shared.errors, shared.text()
    said = [f for f in shared.warnings if "'cos' is a slice of a wider buffer" in f.message]
    assert said and "reads 'sin' by them" in said[0].message, shared.text()
    ignored = _layout(rotary, "launch_rot_ignored")
    cos = [f for f in ignored.errors if "'cos' is a slice of a wider buffer" in f.message]
    assert cos and "wrong again at stride" in cos[0].message, ignored.text()
    assert not _layout(rotary, "launch_rot_right").problems


def test_twins_whose_own_strides_are_both_passed_are_an_error(rotary):
    """The packed-buffer excuse is a launcher's that passes one set of strides. One that passes sin's row stride
    as well says sin may be laid out otherwise, and its kernel reads sin by cos's: each alone row-padded is wrong
    with its own strides among the launch's integers, an error for both (first-run entries rl-games' GAE, values
    read by the rewards' strides, and triton.ops' attention, K and V offset by Q's head stride)."""
    told = _layout(rotary, "launch_rot_told")
    for name, twin in (("cos", "sin"), ("sin", "cos")):
        said = [f for f in told.errors if f"'{name}' is a slice of a wider buffer" in f.message]
        assert said and f"passes the strides of '{name}' and of '{twin}'" in said[0].message, told.text()


def _rotary_judged(rotary, monkeypatch, launcher: str, late_after: int, kind: str = "wrong"):
    """``_judge`` of the launch with 'cos' row-padded, on the real kernel, where ``ctx.late()`` turns true
    after ``late_after`` questions (the second launch asks once, the shared-strides launch once); ``kind``:
    what the first launch is taken to have ended in (its integers as seen)."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    from harness.probe.context import Context
    from harness.probe.target import load

    from harness.run.triton_compat import patched

    t = load(rotary, None, launcher, "interpreter", str(Path(rotary).parent))
    ctx = Context(t, "interpreter", 0, "layout")
    with patched(True):  # as a probe's worker runs (the launches' integers are seen under it)
        return _judged(ctx, t, late_after, kind)


def _judged(ctx, t, late_after: int, kind: str) -> list:
    import types

    from harness.probe import execute as X
    from harness.probe.detectors import layout

    asked = []
    ctx.late = lambda: asked.append(1) or len(asked) > late_after
    inputs = X.make(t, t.sizes, 0, "interpreter")
    ref = X.reference(t, inputs)
    _, plain = layout._outcome(ctx, X.clone_inputs(inputs), ref, changed=True)
    st = {"found": [], "refused": [], "base": plain.ints, "row_stride": set(), "dims": {}, "rows": {}, "wrong": {},
          "written": set(), "names": ["x", "cos", "sin"]}
    given, done = layout._relaid(inputs, ["cos"], ("row-padded",), frozenset(abs(x) for x in plain.ints))
    seen, c = layout._outcome(ctx, given, ref)
    assert seen == "wrong", c.cmp
    if kind == "fault":
        c = types.SimpleNamespace(ints=c.ints, guard={}, cmp={},
                                  error=RuntimeError("CUDA error: an illegal memory access was encountered"))
    layout._judge(ctx, st, kind, c, given, done, ref, inputs)
    return st["found"]


def test_an_error_rests_on_the_shared_strides_tried_and_the_budgets_end_leaves_a_warning(rotary, monkeypatch):
    """A kernel given cos's stride that ignores it is an error only where the launch with cos and sin in one
    layout ran (wrong too); where the budget's end came first, a warning that says what was not tried; a kernel
    that reads sin by cos's stride is a warning whether that launch ran or not, a fault included."""
    found, = _rotary_judged(rotary, monkeypatch, "launch_rot_ignored", late_after=9)
    assert found.severity == "error" and "wrong again at stride" in found.message, found.message
    found, = _rotary_judged(rotary, monkeypatch, "launch_rot_ignored", late_after=1)
    assert found.severity == "warning" and "not tried, at the end of the probe's budget, whether it reads 'sin'" \
        in found.message, found.message
    found, = _rotary_judged(rotary, monkeypatch, "launch_rot_shared", late_after=1)
    assert found.severity == "warning" and "not tried" in found.message, found.message
    found, = _rotary_judged(rotary, monkeypatch, "launch_rot_shared", late_after=9, kind="fault")
    assert found.severity == "warning" and "reads 'sin' by them" in found.message, found.message
    found, = _rotary_judged(rotary, monkeypatch, "launch_rot_ignored", late_after=9, kind="fault")
    assert found.severity == "error" and "an access outside memory" in found.message, found.message


@pytest.fixture
def inplace(tmp_path):
    return _written(tmp_path, "inplace", INPLACE)


def test_an_in_place_argument_written_outside_its_view_is_an_error_and_its_strided_twin_quiet(inplace):
    bad = _layout(inplace, "launch_in_place_assumed")
    errors = bad.errors
    # the row-padded view keeps the last dim contiguous: its gap write is an error; the transposed view breaks
    # stride(-1) == 1, which nearly every launcher assumes: the stride rules' warning
    assert [f.severity for f in bad.by_code("P206")] == ["error", "warning"], bad.text()
    assert "'x' is a slice of a wider buffer" in errors[0].message and "wrote outside 'x'" in errors[0].message
    assert "changes in place, and it wrote into the view's gaps" in errors[0].message, errors[0].message
    assert "passes none of the strides of 'x'" in errors[0].message  # said: what the launcher passes
    assert "'x' is a transposed (column-major) view" in bad.by_code("P206")[1].message
    assert not bad.ok
    good = _layout(inplace, "launch_in_place_strided")
    assert good.findings == [] and good.ok, good.text()
    read = _layout(inplace, "launch_read_assumed")  # wrong too, nothing written outside a view: the warning
    assert [f.severity for f in read.by_code("P206")] == ["warning", "warning"], read.text()
    assert not [f for f in read.findings if "wrote into the view's gaps" in f.message] and read.ok


def _gap_write_judged(monkeypatch, passed: bool, written: bool = True, past: str = "x", then=("wrong", "right"),
                      lay: str = "row-padded"):
    """The layout detector's judgement of one wrong launch with 'x' (changed in place where ``written``) given as a
    slice of a wider buffer and the guard bands of ``past`` changed; ``passed``: whether the launch got x's row
    stride; ``then``: how the later launches end (the second launch of the proof, the one with 'y', x's twin of
    its shape, in x's very layout)."""
    import types

    import torch

    from harness.probe.detectors import layout

    found, ends = [], list(then)
    ctx = types.SimpleNamespace(target=types.SimpleNamespace(sizes={"n": 4}), late=lambda: False,
                                finding=lambda code, text, severity, sizes: (code, severity, text),
                                # the second look with finite gaps (layout._wrote_gaps_finite) writes none there
                                instrument=lambda **kw: contextlib.nullcontext(),
                                call=lambda *a, **kw: types.SimpleNamespace(error=None, guard={}))
    base = {"x": torch.randn(4, 5), "y": torch.randn(4, 5)}
    given, done = layout._relaid(base, ["x"], (lay,))
    st = {"base": set(), "row_stride": set(), "dims": {}, "rows": {}, "refused": [], "wrong": {}, "found": found,
          "names": ["x", "y"], "written": {"x"} if written else set()}
    c = types.SimpleNamespace(ints={given["x"].stride(0)} if passed else set(), guard={"wrote_past_end": {past: 3}},
                              cmp={}, error=None)

    def later(ctx, given, ref):
        return ends.pop(0), types.SimpleNamespace(ints={given["x"].stride(0)}, error=None)

    monkeypatch.setattr(layout, "_outcome", later)
    layout._judge(ctx, st, "wrong", c, given, done, None, base)
    (code, severity, text), = found
    return severity, text


def test_a_gap_write_is_an_error_only_for_a_tensor_changed_in_place_whose_layouts_strides_are_not_passed(
        monkeypatch):
    severity, text = _gap_write_judged(monkeypatch, passed=False)
    assert severity == "error" and "changes in place, and it wrote into the view's gaps" in text, text
    assert "passes none of the strides of 'x'" in text
    severity, text = _gap_write_judged(monkeypatch, passed=False, lay="interleaved")  # stride(-1) != 1: a hazard
    assert severity != "error" and "gaps" not in text, text
    severity, text = _gap_write_judged(monkeypatch, passed=False, written=False)  # an input it only reads
    assert severity == "warning" and "gaps" not in text, text
    severity, text = _gap_write_judged(monkeypatch, passed=False, past="out")  # outside another tensor only
    assert severity == "warning" and "gaps" not in text, text
    # x's strides passed (shown by the second launch), and x right with its twin y in the very same layout: it
    # writes x by y's strides, right for views of one packed buffer: the warning stands, the gaps written or not
    severity, text = _gap_write_judged(monkeypatch, passed=True)
    assert severity == "warning" and "reads 'y' by them" in text and "gaps" not in text, text
    severity, text = _gap_write_judged(monkeypatch, passed=True, then=("wrong", "wrong"))  # its own strides misused
    assert severity == "error" and "wrong again at stride" in text and "gaps" not in text, text


# An update in place that walks its tensor as numel flat elements from the first (an optimizer's step, found on
# torch-optimi 0.3.3's AdamW by a colleague's probe): given a slice of a wider buffer it rewrites the view's gaps
# with an update of what they held. Under the interpreter the gaps' poison NaN comes back as a NaN with the same
# payload (x * 0.5 + 1 of a NaN), the bytes unchanged: the write is seen only with the gaps holding a finite
# value (``layout.GAP_FILL``), and it is an error as any write into a view's gaps; the twin that refuses views
# gives a note.
DECAY = """
import torch
import triton
import triton.language as tl


@triton.jit
def decay_flat(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m)
    tl.store(x_ptr + offs, v * 0.5 + 1.0, mask=m)


def launch(x):  # x taken as numel contiguous elements, nothing checked
    decay_flat[(triton.cdiv(x.numel(), 64),)](x, x.numel(), BLOCK=64)
    return x


def launch_checked(x):  # the twin that refuses a view
    assert x.is_contiguous(), "x must be contiguous"
    return launch(x)


def make_inputs(*, device, gen, rows=6, cols=40):
    return {"x": torch.randn(rows, cols, generator=gen).to(device)}


def reference(x):
    return x.double() * 0.5 + 1.0
"""


def test_an_update_in_place_that_carries_the_gaps_nan_through_is_still_seen_writing_into_them(tmp_path):
    path = _written(tmp_path, "decay", DECAY)
    bad = _layout(path, "launch")
    padded = [f for f in bad.by_code("P206") if "a slice of a wider buffer" in f.message]
    assert [f.severity for f in padded] == ["error"], bad.text()
    assert "changes in place, and it wrote into the view's gaps" in padded[0].message, padded[0].message
    checked = _layout(path, "launch_checked")
    assert checked.ok and not checked.errors and not checked.warnings, checked.text()
