"""The probe's scalars detector (issue #37): the launcher's own integer and bool arguments (and an optional
tensor) at other values, the default sizes kept; a flag the reference takes is judged against the
reference given the same value, a tile the reference does not take by the rule that the result must not
depend on it (harness/probe/detectors/scalars.py). Our own small kernels, under the interpreter."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness import probe
from test_triton_compat import run_interpreted  # tests/ is on the path

# a dot product with one scale per GROUP columns, tiled by the launcher's block_k: the broken index of the
# scales counts the groups of a block as BLOCK_K // GROUP, 0 when BLOCK_K < GROUP, so every block then
# reads group 0's scale; the default block_k = GROUP is right
GROUPED = """
import torch
import triton
import triton.language as tl

GROUP = 64


@triton.jit
def group_dot_kernel(x_ptr, s_ptr, out_ptr, K, stride_x, stride_s, GROUP: tl.constexpr, BLOCK_K: tl.constexpr,
                     RIGHT: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        j = tl.arange(0, BLOCK_K)
        offs = k0 + j
        m = offs < K
        if RIGHT:
            g = offs // GROUP
        else:
            g = (k0 // BLOCK_K) * (BLOCK_K // GROUP) + j // GROUP
        x = tl.load(x_ptr + row * stride_x + offs, mask=m, other=0.0)
        s = tl.load(s_ptr + row * stride_s + g, mask=m, other=0.0)
        acc += x * s
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def scaled_kernel(x_ptr, out_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * 2.0 if MODE == 1 else x * 3.0, mask=offs < n)


def _group_dot(x, scales, block_k, right):
    out = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    assert x.stride(1) == 1 and scales.stride(1) == 1, "rows must be contiguous"
    group_dot_kernel[(x.shape[0],)](x, scales, out, x.shape[1], x.stride(0), scales.stride(0), GROUP=GROUP,
                                    BLOCK_K=block_k, RIGHT=right)
    return out


def launch(x, scales, block_k):
    return _group_dot(x, scales, block_k, False)


def launch_fixed(x, scales, block_k):
    return _group_dot(x, scales, block_k, True)


def launch_mode(x, scales, block_k, mode=1):  # an enum the reference does not know: never varied
    out = torch.empty_like(x).reshape(-1)
    scaled_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), MODE=mode, BLOCK=256)
    return (out.reshape(x.shape).double() / 2 * scales.double().repeat_interleave(GROUP, dim=1)).sum(1)


FUZZ = {"k": 256}  # whole groups only (the reference's repeat_interleave): the rows are fuzzed


def make_inputs(*, device, gen, rows=4, k=256):
    return {"x": torch.randn(rows, k, generator=gen).to(device),
            "scales": torch.rand(rows, k // GROUP, generator=gen).to(device), "block_k": 64}


def reference(x, scales):
    return (x.double() * scales.double().repeat_interleave(GROUP, dim=1)).sum(1)
"""

# each row's sum, of its first i + 1 columns when causal: the broken branch leaves the diagonal out; the
# default (causal=False, the launcher's keyword default) is right
CAUSAL = """
import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n, CAUSAL: tl.constexpr, RIGHT: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    j = tl.arange(0, BLOCK)
    keep = j < n
    if CAUSAL:
        if RIGHT:
            keep = keep & (j <= i)
        else:
            keep = keep & (j < i)
    x = tl.load(x_ptr + i * n + j, mask=keep, other=0.0)
    tl.store(out_ptr + i, tl.sum(x, axis=0))


def _rows(x, causal, right, bias=None):
    out = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    row_sum_kernel[(x.shape[0],)](x, out, x.shape[1], CAUSAL=causal, RIGHT=right,
                                  BLOCK=triton.next_power_of_2(x.shape[1]))
    return out if bias is None else out + bias


def launch(x, causal=False):
    return _rows(x, causal, False)


def launch_fixed(x, causal=False):
    return _rows(x, causal, True)


def launch_refuses(x, causal=False):
    if causal:
        raise NotImplementedError("causal is not supported yet")
    return _rows(x, causal, False)


def make_inputs(*, device, gen, rows=8, cols=8):
    return {"x": torch.randn(rows, cols, generator=gen).to(device)}


def reference(x, causal=False):
    x = x.double()
    return (torch.tril(x) if causal else x).sum(1)
"""

# the same kernels where make_inputs' own keyword (an author's input switch, which the board pins) decides
# the flag: the detector leaves it to the keyword
SWITCHED = CAUSAL.replace("""def make_inputs(*, device, gen, rows=8, cols=8):
    return {"x": torch.randn(rows, cols, generator=gen).to(device)}""",
                          """def make_inputs(*, device, gen, rows=8, cols=8, causal=0):
    return {"x": torch.randn(rows, cols, generator=gen).to(device), "causal": bool(causal)}""")

# an optional bias: given by make_inputs, None by default on both sides; the broken launcher's branch
# without it forgets to write the output
OPTIONAL = CAUSAL.replace("def launch(x, causal=False):", """def launch_bias(x, bias=None):
    out = _rows(x, False, True, bias)
    return out if bias is not None else torch.empty_like(out)


def launch_bias_fixed(x, bias=None):
    return _rows(x, False, True, bias)


def launch(x, causal=False):""").replace("""def make_inputs(*, device, gen, rows=8, cols=8):
    return {"x": torch.randn(rows, cols, generator=gen).to(device)}


def reference(x, causal=False):
    x = x.double()
    return (torch.tril(x) if causal else x).sum(1)""", """def make_inputs(*, device, gen, rows=8, cols=8):
    return {"x": torch.randn(rows, cols, generator=gen).to(device), "bias": torch.randn(rows, generator=gen)}


def reference(x, bias=None):
    return x.double().sum(1) + (0 if bias is None else bias.double())""")


def _file(tmp_path, name: str, text: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(text))
    return str(path)


def _scalars(path, launcher):
    # no budget: what it finds must not depend on the machine's speed
    return probe(path, launcher=launcher, backends=["interpreter"], detectors=["scalars"], jobs=1, budget=0)


def _one_error_and_a_quiet_twin(path, broken: str, fixed: str, severity: str = "error"):
    """The broken launcher's one P208 problem of ``severity`` (the report, the finding); its correct twin has no
    finding."""
    r = _scalars(path, broken)
    found = r.by_code("P208")
    assert [f.severity for f in found] == [severity], r.text()
    twin = _scalars(path, fixed)
    assert twin.findings == [] and twin.ok, twin.text()
    return r, found[0]


def test_a_tile_smaller_than_the_group_is_a_warning_and_its_correct_twin_is_quiet(tmp_path):
    """Wrong at a tile the user's inputs do not launch: a warning (the launch at the inputs is right; a kernel may
    not support every tile), named, with its lesson; never an error, so the probe passes without --strict."""
    r, found = _one_error_and_a_quiet_twin(_file(tmp_path, "user_grouped", GROUPED), "launch", "launch_fixed",
                                           "warning")
    assert "wrong with block_k=32 (make_inputs gives 64) at rows=4, k=256" in found.message, found.message
    assert "a tile of the kernel (BLOCK_K), which the reference does not take" in found.message
    assert "have the launcher refuse it" in found.message
    assert r.ok and not r.errors, r.text()
    assert r.diagnosis[0]["defect"] == "autotune-config-reuse", r.diagnosis
    assert "autotune-key-missing-shape" in [c["slug"] for c in found.cases]


# a kernel that loads one scale per block: right for every block_k up to GROUP that divides it, wrong past it (a
# block then spans two groups)
UP_TO_GROUP = GROUPED.replace("""def reference(x, scales):""", """def launch_upto(x, scales, block_k):
    out = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    one_scale_kernel[(x.shape[0],)](x, scales, out, x.shape[1], x.stride(0), scales.stride(0), GROUP=GROUP,
                                    BLOCK_K=block_k)
    return out


@triton.jit
def one_scale_kernel(x_ptr, s_ptr, out_ptr, K, stride_x, stride_s, GROUP: tl.constexpr, BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + row * stride_x + offs, mask=offs < K, other=0.0)
        s = tl.load(s_ptr + row * stride_s + k0 // GROUP)
        acc += x * s
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def reference(x, scales):""")


@pytest.mark.parametrize("named", [False, True])
def test_a_tile_the_kernel_does_not_support_is_a_warning_even_where_the_reference_names_it(tmp_path, named):
    """block_k=128 spans two groups of 64, which this kernel (one scale per block) does not support: wrong there,
    right at 64 and 32. A reference that takes block_k and ignores it (``named``) does not make it a branch of what
    is computed (that was an error, 'the reference takes it'): the same warning as where it does not take it."""
    text = UP_TO_GROUP.replace("def reference(x, scales):", "def reference(x, scales, block_k=None):") if named \
        else UP_TO_GROUP
    r = _scalars(_file(tmp_path, "user_upto", text), "launch_upto")
    found = r.by_code("P208")
    assert [f.severity for f in found] == ["warning"], r.text()
    assert "block_k=128 (make_inputs gives 64)" in found[0].message, found[0].message
    assert "a tile of the kernel (BLOCK_K)" in found[0].message and r.ok, r.text()


def test_an_argument_the_reference_does_not_take_and_no_block_is_shaped_by_is_left_alone(tmp_path):
    """mode=1 selects a formula the reference does not know (mode=2 would be 'wrong'): not a tile, not varied."""
    r = _scalars(_file(tmp_path, "user_grouped", GROUPED), "launch_mode")
    assert r.findings == [] and r.ok, r.text()


def test_a_flag_whose_branch_is_wrong_is_an_error_and_its_correct_twin_is_quiet(tmp_path):
    r, found = _one_error_and_a_quiet_twin(_file(tmp_path, "user_causal", CAUSAL), "launch", "launch_fixed")
    assert "wrong with causal=True (the launcher's default is False) at rows=8, cols=8" in found.message
    assert "the reference takes it and was given the same value" in found.message
    assert r.diagnosis and r.diagnosis[0]["defect"] == "wrong-formula", r.diagnosis


def test_a_launcher_that_raises_at_a_value_gives_a_note_only(tmp_path):
    r = _scalars(_file(tmp_path, "user_causal", CAUSAL), "launch_refuses")
    assert not r.problems and r.ok, r.text()
    note = r.by_code("P208")
    assert [f.severity for f in note] == ["info"], r.text()
    assert "the launcher raised with causal=True" in note[0].message
    assert "NotImplementedError: causal is not supported yet" in note[0].message


def test_a_flag_that_make_inputs_own_switch_decides_is_left_to_the_switch(tmp_path):
    """The board pins an entry author's switches (make_inputs' keywords): the detector varies only what
    make_inputs returns on its own, so the same broken branch behind a switch is not reached here."""
    r = _scalars(_file(tmp_path, "user_switched", SWITCHED), "launch")
    assert r.findings == [], r.text()  # skipped (alone, nothing else was checked: not ok, not a finding)
    assert any(d == "scalars" and "switches" in st for _, d, _, st in r.ran), r.ran


def test_an_optional_tensor_left_out_takes_the_branch_without_it(tmp_path):
    _, found = _one_error_and_a_quiet_twin(_file(tmp_path, "user_optional", OPTIONAL), "launch_bias",
                                           "launch_bias_fixed")
    assert "'bias' left out (None, the launcher's and the reference's default)" in found.message


# an integer scale the reference takes, 1 in make_inputs' dict (as a config's default): the broken kernel applies
# it twice, right at 1 only. 1 is also the unit stride of every contiguous input: no size of the inputs
SCALED = """
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, scale, TWICE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0) * scale
    if TWICE:
        x = x * scale
    tl.store(out_ptr + offs, x, mask=offs < n)


def _scaled(x, scale, twice):
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), float(scale), TWICE=twice, BLOCK=128)
    return out


def launch(x, scale):
    return _scaled(x, scale, True)


def launch_fixed(x, scale):
    return _scaled(x, scale, False)


def make_inputs(*, device, gen, n=300):
    return {"x": torch.randn(n, generator=gen).to(device), "scale": 1}


def reference(x, scale):
    return x.double() * scale
"""


def test_an_integer_scale_of_one_is_varied_though_it_equals_a_unit_stride(tmp_path):
    """x's stride is 1, as every contiguous tensor's last one is: that names no size, and the scale is varied."""
    _, found = _one_error_and_a_quiet_twin(_file(tmp_path, "user_scaled", SCALED), "launch", "launch_fixed")
    assert "wrong with scale=2 (make_inputs gives 1) at n=300" in found.message, found.message


# each element tagged with its block's index in bits 40 and up where the launcher's flag asks: the broken kernel
# shifts the int32 program id by 40 in its own type (past its 32 bits), the fixed one widens it first
TAGGED = """
import torch
import triton
import triton.language as tl


@triton.jit
def tag_kernel(x_ptr, out_ptr, n, TAG: tl.constexpr, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0)
    if TAG:
        if WIDE:
            v |= pid.to(tl.int64) << 40
        else:
            v |= pid << 40
    tl.store(out_ptr + offs, v, mask=offs < n)


def _tag(x, tag, wide):
    out = torch.empty_like(x)
    tag_kernel[(triton.cdiv(x.numel(), 64),)](x, out, x.numel(), TAG=tag, WIDE=wide, BLOCK=64)
    return out


def launch(x, tag=False):
    return _tag(x, tag, False)


def launch_fixed(x, tag=False):
    return _tag(x, tag, True)


def make_inputs(*, device, gen, n=300):
    return {"x": torch.randint(0, 1 << 20, (n,), generator=gen).to(device)}


def reference(x, tag=False):
    return x | (torch.arange(x.numel(), device=x.device) // 64 << 40) if tag else x.clone()
"""


def test_a_value_whose_run_shifts_an_int32_past_its_width_is_named_an_overflow(tmp_path):
    """The wrong run at tag=True is made once more with the int wrap check: the shift of the 32-bit program id by
    40 is named at its line, and the diagnosis ranks it an overflow, not the flag's formula."""
    r, found = _one_error_and_a_quiet_twin(_file(tmp_path, "user_tagged", TAGGED), "launch", "launch_fixed")
    assert "wrong with tag=True (the launcher's default is False)" in found.message, found.message
    line = textwrap.dedent(TAGGED).splitlines().index("            v |= pid << 40") + 1
    assert "an integer wraps at " in found.message and f"user_tagged.py:{line} (int32 << 40: a shift past the 32 " \
        "bits" in found.message, found.message
    assert r.diagnosis and r.diagnosis[0]["defect"] == "overflow", r.diagnosis


def test_the_values_tried_come_from_the_value_and_its_type():
    from harness.probe.detectors.scalars import domain

    assert domain(True) == [False] and domain(False) == [True]
    assert domain(0) == [1, 2] and domain(1) == [0, 2]
    assert domain(64) == [32, 128] and domain(4) == [2, 8, 3, 5] and domain(2) == [1, 4, 3]
    assert domain(3) == [2, 4] and domain(100) == [50, 101] and domain(-1) == []


def test_a_scalar_that_a_size_decides_is_not_varied(monkeypatch):
    """A scalar that moves with a keyword of make_inputs, or equals a size of the inputs that stays put
    whatever the keywords (a dim, a ratio of two dims), is the sizes'; a constant that only happens to
    equal a size the keywords move is not."""
    import torch

    from harness.probe.detectors import scalars

    def make_inputs(*, device, gen, rows=4, k=256):
        return {"x": torch.zeros(rows, k), "w": torch.zeros(8, 128), "s": torch.zeros(rows, k // 64),
                "n": rows * k, "cols": 128, "group": 16, "block_k": 64, "flag": True,
                "offsets": torch.tensor([0, 5, 7, 17]), "longest": 10, "scale": 1}

    class T:
        sizes = {"rows": 4, "k": 256}

        @staticmethod
        def launcher(x, w, s, n, cols, group, block_k, flag, offsets, longest, scale, extra=3):
            pass

    T.make_inputs = staticmethod(make_inputs)

    class C:
        target, seed, backend = T, 0, "interpreter"

    inputs = make_inputs(device="cpu", gen=None)
    fixed = scalars.fixed_by_sizes(C, inputs)
    # n moves with the keywords; cols is w's constant dim; group is w's 128 / 8 ratio; longest is the offsets'
    # largest step (a segment's length); block_k equals k // 4 only at the defaults (k=257 makes x's dim move,
    # not block_k); flag and extra are nobody's, nor is scale (1: only the unit strides of contiguous dims)
    assert fixed == {"n", "cols", "group", "longest"}, fixed
    assert scalars.value_bounds(inputs) == [17, 10]  # no int argument is taken below these where it bounds them
    assert scalars.values_for(scalars.Arg("most", 16, "branch"), [13]) == [32]  # 8 < 13: not tried
    assert scalars.values_for(scalars.Arg("block", 16, "tile"), [40]) == [8, 32]  # 40 > 16: not its bound


DEADLINE_RUN = r"""
import json
from pathlib import Path
from harness.probe.budget import Budget, ManualClock
from harness.probe.context import Context
from harness.probe.detectors import scalars
from harness.probe.target import load

path = PATH
from harness.run import triton_compat

clock = ManualClock()
t = load(path, None, "launch", "interpreter", str(Path(path).parent))
ctx = Context(t, "interpreter", 0, "scalars", budget=Budget(clock=clock))
ctx.budget.deadline = clock.t + 1.5
plain = ctx.call
ctx.call = lambda *a, **k: (clock.sleep(1.0), plain(*a, **k))[1]  # each launch takes a second
with triton_compat.patched(interpreter=True):  # as the probe's worker runs (Triton 3.6's loop over a runtime bound)
    found = scalars.run(ctx)  # the default run, then block_k=32; block_k=128 is past the deadline
ctx.board.scalars_now = found[:1]
kept = scalars.partial(ctx) == found[:1] and ctx.board.scalars_now is None
print("RESULT " + json.dumps({"found": [[f.code, f.severity, f.message] for f in found], "kept": kept}))
"""


def test_it_stops_at_its_deadline_with_a_note(tmp_path):
    """On a fake clock, in a process of its own (Triton's in-process state left by other tests stays out)."""
    path = _file(tmp_path, "user_grouped", GROUPED)
    got = run_interpreted(DEADLINE_RUN.replace("PATH", repr(path), 1))
    found = got["found"]
    assert [f[0] for f in found] == ["P208", "P000"], found
    assert "block_k=32" in found[0][2] and "scalars stopped" in found[1][2]
    assert found[1][1] == "info" and got["kept"]


@pytest.mark.parametrize("launcher", ["launch", "launch_fixed"])
def test_the_default_probe_runs_it(tmp_path, launcher):
    """Every detector at its defaults, as a user runs it: the tile bug is found by this detector alone."""
    r = probe(_file(tmp_path, "user_grouped", GROUPED), launcher=launcher, backends=["interpreter"])
    problems = [f for f in r.problems if f.code != "P406"]  # (P406: its int32 row offset, row * stride_x)
    if launcher == "launch_fixed":
        assert not problems, r.text()
        return
    assert {f.detector for f in problems} == {"scalars"}, r.text()
    assert r.diagnosis[0]["defect"] == "autotune-config-reuse", r.diagnosis


def test_it_runs_on_the_interpreter_side_only():
    """Its dry run (a tile's constexprs) is the instrumented interpreter's; a GPU probe runs both backends at
    once (gpu+interpreter), so the interpreter side still varies the arguments."""
    from harness.probe.detectors import batches

    assert not any("scalars" in b for b in batches("gpu"))
    assert any("scalars" in b for b in batches("interpreter"))


def test_a_value_where_the_reference_has_no_answer_or_another_shape_is_not_judged():
    import torch

    from harness.probe.detectors.scalars import Arg, _unjudged

    class C:
        def __init__(self, out, ref):
            self.out, self.ref = out, ref

    st = {"shape": (4,)}
    assert _unjudged(C(torch.zeros(4), torch.ones(4)), st) == ""  # a plain wrong result: judged
    assert "not finite" in _unjudged(C(torch.zeros(4), torch.tensor([1.0, float("nan"), 1.0, 1.0])), st)
    assert "has shape (8,)" in _unjudged(C(torch.zeros(4), torch.ones(8)), st)  # outputs sized for the default
    assert _unjudged(C(torch.zeros(8), torch.ones(8)), st) == ""  # the launcher made its own: judged
    tile = Arg("group", 64, "tile")  # a tile whose value changes the result's shape (scales per group): not one
    assert "not a tile" in _unjudged(C(torch.zeros(6), torch.ones(4)), st, tile)
    assert _unjudged(C(torch.zeros(4), torch.ones(4)), st, tile) == ""


MATMUL = """
import torch
import triton
import triton.language as tl


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def launch(a, b, block_m=32, block_n=32, block_k=32, num_warps=4):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty(M, N, device=a.device, dtype=torch.float32)
    grid = (triton.cdiv(M, block_m), triton.cdiv(N, block_n))
    mm_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                    BM=block_m, BN=block_n, BK=block_k, num_warps=num_warps)
    return c


def make_inputs(*, device, gen, m=40, n=48, k=72):
    return {"a": torch.randn(m, k, generator=gen).to(device), "b": torch.randn(k, n, generator=gen).to(device)}


def reference(a, b):
    return a.double() @ b.double()
"""


def test_a_correct_tiled_matmul_is_quiet_at_other_tiles(tmp_path):
    """Its three block sizes (the launcher's keyword defaults) are tiles: other values sum K in another order,
    within the error floor; num_warps shapes no block and is left alone."""
    from harness.probe.detectors import scalars
    from harness.probe.target import load

    path = _file(tmp_path, "user_matmul", MATMUL)
    r = _scalars(path, "launch")
    assert r.findings == [] and r.ok and ("interpreter", "scalars") in [(b, d) for b, d, _, st in r.ran
                                                                       if st == "done"], (r.text(), r.ran)
    t = load(path, None, "launch", "interpreter", str(tmp_path))
    assert [(a.name, a.kind) for a in scalars.arguments(t, {"a": None, "b": None}, set())] == [
        ("block_m", "tile"), ("block_n", "tile"), ("block_k", "tile"), ("num_warps", "tile")]  # candidates only


def test_a_flag_behind_a_held_switch_is_varied_as_the_literal_it_stands_for(tmp_path):
    """The same switch held at its default (``--sizes causal=0``, as the board pins an entry author's switch):
    no detector varies the keyword, and it passes its value on to the launcher unchanged, shaping no tensor, so
    the argument is what a literal in make_inputs' dict is (a user's file holding one choice) and is varied as
    one: the broken branch is an error, its correct twin quiet. Left free, the switch is shape fuzzing's."""
    path = _file(tmp_path, "user_switched", SWITCHED)
    held = {"pinned": ["causal"]}
    r = probe(path, launcher="launch", backends=["interpreter"], detectors=["scalars"], jobs=1, options=held)
    found = r.by_code("P208")
    assert [f.severity for f in found] == ["error"], r.text()
    assert "wrong with causal=True" in found[0].message, found[0].message
    twin = probe(path, launcher="launch_fixed", backends=["interpreter"], detectors=["scalars"], jobs=1, options=held)
    assert twin.findings == [] and twin.ok, twin.text()
