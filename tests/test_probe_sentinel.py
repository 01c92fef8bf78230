"""The probe's sentinel detector (issue #37): the sentinel the contract names (a torch loss's ignore_index the file
writes, a negative value a parameter names that the reference compares an index input with) put into that integer
input, scattered and as a whole row, judged against the float64 reference of those very inputs
(harness/probe/detectors/sentinel.py). Our own small kernels, under the interpreter."""

from __future__ import annotations

import textwrap

import pytest
import torch

from harness import probe

# a per-token cross-entropy kernel that knows the ignored label (its loss 0, its count 0), a mean over every token
# (the ignored ones counted) and over the tokens that count, a per-sequence mean with and without its count guarded,
# and a kernel with no ignored label at all that reads x[r, y] whatever y is
KERNELS = """
import torch
import triton
import triton.language as tl

IGNORE = -100


@triton.jit
def token_lse(x_ptr, y_ptr, V, BLOCK: tl.constexpr):  # this program's token: its label, its row's logsumexp
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + r * V + c, mask=c < V, other=-float("inf"))
    m = tl.max(x, axis=0)
    return r, tl.load(y_ptr + r), m + tl.log(tl.sum(tl.exp(x - m), axis=0))


@triton.jit
def ce_rows_kernel(x_ptr, y_ptr, loss_ptr, kept_ptr, V, ignore, BLOCK: tl.constexpr):
    r, y, lse = token_lse(x_ptr, y_ptr, V, BLOCK)
    skip = y == ignore
    xy = tl.load(x_ptr + r * V + y, mask=~skip, other=0.0)
    tl.store(loss_ptr + r, tl.where(skip, 0.0, lse - xy))
    tl.store(kept_ptr + r, tl.where(skip, 0.0, 1.0))


@triton.jit
def ce_gather_kernel(x_ptr, y_ptr, loss_ptr, V, BLOCK: tl.constexpr):
    r, y, lse = token_lse(x_ptr, y_ptr, V, BLOCK)
    tl.store(loss_ptr + r, lse - tl.load(x_ptr + r * V + y))


def _rows(logits, target, ignore=IGNORE):
    x = logits.reshape(-1, logits.shape[-1]).contiguous()
    y = target.reshape(-1).contiguous()
    loss = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    kept = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    ce_rows_kernel[(x.shape[0],)](x, y, loss, kept, x.shape[1], ignore, BLOCK=triton.next_power_of_2(x.shape[1]))
    return loss, kept


def ce_mean_counts_all(logits, target):
    loss, _ = _rows(logits, target)
    return (loss.sum() / loss.numel()).reshape(1)


def ce_mean(logits, target):
    loss, kept = _rows(logits, target)
    return (loss.sum() / kept.sum()).reshape(1)


def ce_mean_clamped(logits, target):  # a batch with every token ignored: 0 (the count clamped to 1)
    loss, kept = _rows(logits, target)
    return (loss.sum() / kept.sum().clamp_min(1.0)).reshape(1)


def ce_seq_mean(logits, target, ignore_index=IGNORE):  # a sequence with every token ignored: 0 / 0
    loss, kept = _rows(logits, target, ignore_index)
    return loss.reshape(target.shape).sum(-1) / kept.reshape(target.shape).sum(-1)


def ce_seq_mean_guarded(logits, target, ignore_index=IGNORE):
    loss, kept = _rows(logits, target, ignore_index)
    return loss.reshape(target.shape).sum(-1) / kept.reshape(target.shape).sum(-1).clamp_min(1.0)


def ce_gather(logits, target):
    x = logits.reshape(-1, logits.shape[-1]).contiguous()
    y = target.reshape(-1).contiguous()
    loss = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
    ce_gather_kernel[(x.shape[0],)](x, y, loss, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    return loss


def make_inputs(*, device, gen, batch=2, seq=12, vocab=40):
    return {"logits": torch.randn(batch, seq, vocab, generator=gen).to(device),
            "target": torch.randint(0, vocab, (batch, seq), generator=gen).to(device)}
"""

REFERENCES = {
    # torch's mean over the tokens whose label is not ignore_index (written out: the contract names -100)
    "mean": "def reference(logits, target):\n    v = logits.shape[-1]\n"
            "    return F.cross_entropy(logits.double().reshape(-1, v), target.reshape(-1).long(),\n"
            "                           ignore_index=IGNORE).reshape(1)\n",
    # the mean over a flat batch of tokens: with every one ignored, torch's mean is 0/0 = NaN
    "flat": "def make_inputs(*, device, gen, tokens=24, vocab=40):\n"
            "    return {'logits': torch.randn(tokens, vocab, generator=gen).to(device),\n"
            "            'target': torch.randint(0, vocab, (tokens,), generator=gen).to(device)}\n\n\n"
            "def reference(logits, target):\n"
            "    return F.cross_entropy(logits.double(), target.long(), ignore_index=IGNORE).reshape(1)\n",
    # per token, 0 where ignored
    "tokens": "def reference(logits, target):\n    v = logits.shape[-1]\n"
              "    return F.cross_entropy(logits.double().reshape(-1, v), target.reshape(-1).long(),\n"
              "                           ignore_index=IGNORE, reduction='none')\n",
    # per token with no ignore_index written: torch's default -100 is not taken as the contract's
    "plain": "def reference(logits, target):\n    v = logits.shape[-1]\n"
             "    return F.cross_entropy(logits.double().reshape(-1, v), target.reshape(-1).long(),\n"
             "                           reduction='none')\n",
    # names its sentinel as a parameter and compares with it, but refuses inputs that hold it
    "refuses": "def reference(logits, target, ignore_index=-100):\n"
               "    if bool((target == ignore_index).any()):\n"
               "        raise ValueError('padding is not supported')\n"
               "    v = logits.shape[-1]\n"
               "    return F.cross_entropy(logits.double().reshape(-1, v), target.reshape(-1).long(),\n"
             "                           reduction='none')\n",
    # a mean per sequence over its tokens that count, a sequence with none giving 0 (its count clamped to 1)
    "seq": "def reference(logits, target, ignore_index=-100):\n"
           "    keep = target != ignore_index\n"
           "    safe = torch.where(keep, target, torch.zeros_like(target)).long()\n"
           "    lp = torch.log_softmax(logits.double(), -1).gather(-1, safe[..., None]).squeeze(-1)\n"
           "    return (-lp * keep).sum(-1) / keep.sum(-1).clamp_min(1)\n",
}


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    root = tmp_path_factory.mktemp("sentinel")
    (root / "ce_kernels.py").write_text(textwrap.dedent(KERNELS))
    out = {}
    for name, ref in REFERENCES.items():
        path = root / f"user_{name}.py"
        path.write_text("import torch\nimport torch.nn.functional as F\n\nfrom ce_kernels import *  # noqa: F401,F403\n"
                        f"\n\n{ref}")
        out[name] = str(path)
    return out


def _sentinel(path, launcher):
    # no budget: what it finds must not depend on the machine's speed
    return probe(path, launcher=launcher, backends=["interpreter"], detectors=["sentinel"], jobs=1, budget=0)


def _ran(r) -> str:
    return next(st for _, d, _, st in r.ran if d == "sentinel")


def test_a_mean_that_counts_the_ignored_tokens_is_an_error_named_wrong_formula(user):
    r = _sentinel(user["mean"], "ce_mean_counts_all")
    found = r.by_code("P209")
    assert [f.severity for f in found] == ["error", "error"], r.text()
    scattered, row = found
    assert scattered.message.startswith("with the sentinel -100 scattered in 7 of the 24 elements of 'target' (every "
                                        "4th from 1, the last) at batch=2, seq=12, vocab=40 (the reference gives it "
                                        "to torch's cross_entropy with ignore_index=-100): off by more than the "
                                        "tolerance"), scattered.message
    assert row.message.startswith("with the sentinel -100 as a whole row in target[0, :]"), row.message
    assert scattered.defect == "wrong-formula"
    assert r.diagnosis[0]["defect"] == "wrong-formula", r.diagnosis
    assert not r.ok


def test_the_mean_over_the_tokens_that_count_is_quiet(user):
    r = _sentinel(user["mean"], "ce_mean")
    assert r.findings == [] and r.ok, r.text()
    assert _ran(r).startswith("done"), r.ran


def test_a_gather_through_the_sentinel_is_an_out_of_bounds_read_like_the_negative_index_lesson(user):
    r = _sentinel(user["tokens"], "ce_gather")
    found = [f for f in r.by_code("P209") if f.severity == "error"]
    assert found and found[0].defect == "out-of-bounds-read", r.text()
    assert ": load before the start of 'x_ptr'" in found[0].message, found[0].message
    first = r.diagnosis[0]
    assert (first["defect"], first["case"]) == ("out-of-bounds-read", "c-style-division-negative"), r.diagnosis


def test_a_kernel_whose_contract_names_no_sentinel_is_not_given_one(user):
    """The same gather against a reference that writes no ignore_index (torch's default -100 is not the user's
    contract): the detector does not run, and says why."""
    r = _sentinel(user["plain"], "ce_gather")
    assert r.findings == [], r.text()
    assert _ran(r).startswith("skipped: the contract names no sentinel"), r.ran


def test_a_reference_that_refuses_the_sentinel_gives_a_note_only(user):
    r = _sentinel(user["refuses"], "ce_gather")
    assert not r.problems, r.text()
    note = r.by_code("P209")
    assert [f.severity for f in note] == ["info"], r.text()
    assert "the reference raised with the sentinel -100 scattered in 'target'" in note[0].message, note[0].message
    assert "ValueError: padding is not supported" in note[0].message


def test_a_sequence_with_every_token_ignored_divides_0_by_0_where_the_reference_guards_it(user):
    """The whole row at the sentinel: the unguarded per-sequence mean is NaN where the reference (its count
    clamped to 1) gives 0: an error, degenerate-size; scattered, both agree. The guarded twin is quiet."""
    r = _sentinel(user["seq"], "ce_seq_mean")
    found = r.by_code("P209")
    assert [f.severity for f in found] == ["error"], r.text()
    assert found[0].message.startswith("with the sentinel -100 as a whole row in target[0, :]"), found[0].message
    assert "NaN/Inf where the float64 reference is finite" in found[0].message
    assert "compares it with -100, the value of the launcher's parameter 'ignore_index'" in found[0].message
    assert found[0].defect == "degenerate-size" and r.diagnosis[0]["defect"] == "degenerate-size", r.diagnosis
    twin = _sentinel(user["seq"], "ce_seq_mean_guarded")
    assert twin.findings == [] and twin.ok, twin.text()


def test_a_batch_with_every_token_ignored_has_no_finite_mean_and_is_not_judged(user):
    """A 1-D target given the sentinel as its whole row is every token ignored: torch's mean is 0/0 = NaN, so a
    kernel that clamps the count (0) is not judged (a note); scattered, it is right (no error)."""
    r = _sentinel(user["flat"], "ce_mean_clamped")
    assert not r.problems, r.text()
    note = r.by_code("P209")
    assert [f.severity for f in note] == ["info"], r.text()
    assert "with the sentinel -100 as a whole row in all of 'target'" in note[0].message, note[0].message
    assert "the kernel differs only where the reference is not finite (NaN or Inf at 1 of 1 result" in note[0].message


def test_where_the_sentinel_goes():
    from harness.probe.detectors import sentinel

    t = {"y": torch.arange(10).reshape(2, 5)}
    assert sentinel.place(t, "y", -1, "row") == "y[0, :]"
    assert t["y"].tolist() == [[-1] * 5, [5, 6, 7, 8, 9]]
    t = {"y": torch.arange(10)}
    assert sentinel.place(t, "y", -100, "scattered").startswith("3 of the 10 elements of 'y'")
    assert (t["y"] == -100).nonzero().reshape(-1).tolist() == [1, 5, 9]  # every fourth from 1; 9 is the last too
    strided = {"y": torch.zeros(4, 6, dtype=torch.int32)[:, ::2]}  # a view: its layout kept, its values set
    sentinel.place(strided, "y", -1, "row")
    assert strided["y"].stride() == (6, 2) and strided["y"][0].tolist() == [-1, -1, -1]
    assert sentinel.holds(torch.tensor([0, 3, 7]), -100) and sentinel.holds(torch.tensor([0, -100, 7]), -100)
    assert not sentinel.holds(torch.tensor([0, -3, 7]), -1)  # a negative value that is not it: not an index
    assert not sentinel.holds(torch.tensor([0, 3], dtype=torch.uint8), -1)  # the dtype does not hold it
    assert sentinel.plan([("y", -1, "why")]) == [("y", -1, "why", "scattered"), ("y", -1, "why", "row")]


def test_the_contract_names_a_sentinel_only_by_a_parameter_or_a_written_ignore_index():
    """A negative parameter (a default, or what make_inputs gives) that the reference compares an index input with
    for equality names it; a comparison with a value no parameter names, an order comparison (>= 0), a float
    input, a parameter the reference never compares with, do not."""
    from harness.probe.detectors import sentinel

    def launch(y, w, pad=-1, dim=-1):
        return None

    class T:
        launcher = staticmethod(launch)

        @staticmethod
        def reference(y, w, pad=-1, dim=-1):
            keep = (y.reshape(-1) != pad) & (y.reshape(-1) >= 0) & (w.reshape(-1) != -2)
            return (w.reshape(-1) * keep).sum(dim)

    inputs = {"y": torch.tensor([[0, 1], [2, 3]]), "w": torch.ones(2, 2)}
    named = sentinel.named_values(T, inputs)
    assert named == {("launcher", "pad"): -1, ("launcher", "dim"): -1, ("reference", "pad"): -1,
                     ("reference", "dim"): -1}
    got = sentinel.watched(T, inputs, sentinel.index_inputs(T, inputs), named, False)
    assert got == [("y", -1, "the reference compares it with -1, the value of the launcher's parameter 'pad'")]
    assert sentinel.named_values(T, {**inputs, "pad": -7})[("reference", "pad")] == -7  # what make_inputs gives

    class U(T):
        @staticmethod
        def reference(y, w):
            return (w.reshape(-1) * (y.reshape(-1) != -5)).sum()  # -5: named by no parameter

    assert sentinel.watched(U, inputs, ["y"], sentinel.named_values(U, inputs), False) == []


@pytest.mark.parametrize("defect,first,case", [
    ("wrong-formula", "wrong-formula", None),
    ("out-of-bounds-read", "out-of-bounds-read", "c-style-division-negative"),
    ("out-of-bounds-write", "out-of-bounds-write", None),
    ("degenerate-size", "degenerate-size", None),
])
def test_the_diagnosis_ranks_what_the_sentinel_showed_above_a_layout_warning_beside_it(defect, first, case):
    """A P209 error is what the sentinel alone changed (the plain run of the same layout and sizes was right), so
    its class comes before a layout warning's stride assumption (a hazard the same probe may also report)."""
    from harness.probe.diagnosis import diagnose
    from harness.probe.findings import WARNING, Finding

    layout = Finding("P206", "layout", "interpreter", "wrong when 'x' is a slice of a wider buffer", severity=WARNING)
    access = {"out-of-bounds-read": "k: load before the start of 'x' at f.py:3",
              "out-of-bounds-write": "k: store before the start of 'out' at f.py:4"}.get(defect, "off")
    found = Finding("P209", "sentinel", "interpreter", f"with the sentinel -1 scattered in 'y': {access}",
                    defect=defect)
    d = diagnose([layout, found])
    assert d[0]["defect"] == first, d
    if case is not None:
        assert d[0]["case"] == case, d
    assert "stride-assumption" in [x["defect"] for x in d]  # still listed, after


DEADLINE_RUN = r"""
import json
from pathlib import Path
from harness.probe.budget import Budget, ManualClock
from harness.probe.context import Context
from harness.probe.detectors import sentinel
from harness.probe.target import load

path = PATH
clock = ManualClock()
t = load(path, None, "ce_mean_counts_all", "interpreter", str(Path(path).parent))
ctx = Context(t, "interpreter", 0, "sentinel", budget=Budget(clock=clock))
ctx.budget.deadline = clock.t + 1.5
plain = ctx.call
ctx.call = lambda *a, **k: (clock.sleep(1.0), plain(*a, **k))[1]  # each launch takes a second
found = sentinel.run(ctx)  # the plain run, then the scattered one; the whole row is past the deadline
ctx.board.sentinel_now = found[:1]
kept = sentinel.partial(ctx) == found[:1] and ctx.board.sentinel_now is None
print("RESULT " + json.dumps({"found": [[f.code, f.severity, f.message] for f in found], "kept": kept}))
"""


def test_it_stops_at_its_deadline_with_a_note(user):
    """On a fake clock, in a process of its own (Triton's in-process state left by other tests stays out)."""
    from test_triton_compat import run_interpreted  # tests/ is on the path

    got = run_interpreted(DEADLINE_RUN.replace("PATH", repr(user["mean"]), 1))
    found = got["found"]
    assert [f[0] for f in found] == ["P209", "P000"], found
    assert found[0][2].startswith("with the sentinel -100 scattered") and "sentinel stopped" in found[1][2]
    assert found[1][1] == "info" and got["kept"]


@pytest.mark.parametrize("launcher", ["ce_mean_counts_all", "ce_mean"])
def test_the_default_probe_runs_it(user, launcher):
    """Every detector at its defaults, as a user runs it (no budget: the answer must not depend on the machine's
    speed): the mean counting ignored tokens is found by this detector alone; the right mean is quiet."""
    r = probe(user["mean"], launcher=launcher, backends=["interpreter"], budget=0)
    assert _ran(r).startswith("done"), r.ran
    if launcher == "ce_mean":
        assert not r.problems, r.text()
        return
    assert {f.detector for f in r.problems} == {"sentinel"}, r.text()
    assert r.diagnosis[0]["defect"] == "wrong-formula", r.diagnosis


def test_it_runs_on_the_interpreter_side_only():
    """On a GPU a gather through the sentinel is an illegal address that ends the process's CUDA context; a GPU
    probe runs both backends at once (gpu+interpreter), so the interpreter side still puts it in."""
    from harness.probe.detectors import batches

    assert not any("sentinel" in b for b in batches("gpu"))
    assert any("sentinel" in b for b in batches("interpreter"))
