"""The same values in another memory layout: a correct kernel's result depends on the values of its
inputs, not on how the caller laid them out, unless the launcher refuses the layout (an assert, an
error, ``x.view(-1, H)`` that torch refuses: its domain, a note) or copies it (``.contiguous()``,
``.reshape`` where torch cannot view: it passes).

At the default sizes, each tensor that ``make_inputs`` gives contiguous and the reference reads
(a value, an in-place argument; not an output buffer the reference never sees) is given again, with
the same values, in a layout torch code produces (the last dim contiguous unless said):

- "row-padded": a slice of a wider buffer, ``torch.empty(rows, cols + 16)[:, :cols]`` (a fused QKV's
  head, a padded vocabulary, a packed tensor's column slice ``packed[..., k:k + n]``): rows
  ``cols + 16`` elements apart, each row contiguous;
- "transposed": a column-major view, ``w.t()`` of a (cols, rows + 16) buffer's first rows columns (the
  padding makes its column stride a number no size equals);
- "strided" (1-D): every third element of a buffer (``buf[::3]``, a column ``x[:, j]``; the step an odd
  prime: 3, 5, 7, ...);
- "permuted" (3-D and more): the two dims before the last swapped in memory, ``x.transpose(-3, -2)``
  of a contiguous buffer: a (batch, seq, hidden) tensor stored seq-major, attention's
  (batch, heads, seq, dim) from a (batch, seq, heads, dim) projection; the buffer's rows padded, so
  each of its strides is a number the contiguous launch was not given;
- "interleaved": a packed buffer's every third column from the second, ``packed[..., 1::3]``
  (interleaved real/imaginary parts, gate/up projections, rotary halves): the last dim strided (the step an
  odd prime);
- "broadcast": a matrix the launch only reads given as its first row expanded over dim 0
  (``bias.expand(rows, -1)``, a mask or positions expanded over the batch: stride 0). Fair for an input
  only: torch refuses writes into an expanded tensor, so a tensor the plain launch wrote is never
  given one. Its values are other than ``make_inputs``' (rows repeated), so it is tried only where
  the reference takes the expanded view and gives what it gives for the same values materialized
  (torch code reads a broadcast as its values; a reference that raises on it, writing into it,
  says it is not its input), and only where the kernel is right on those values materialized: then
  the expanded run is judged like the others, "right when contiguous, the same values".

Two inputs of one shape that are views of one wider buffer (``q, k = qkv[..., :n], qkv[..., n:]``;
a quantized weight's scales and zeros) have one set of strides: where a launch given one tensor's
strides is wrong, the tensors of its shape are given the same layout with those very strides, and a
launcher right then reads them all by the one tensor's strides: right for views of one packed buffer,
wrong when they differ (a warning, not an error), a fault included (reading one by the other's larger stride
runs past its end). Unless the launcher passes each such tensor's own strides too (each, laid out alone, wrong
with its strides among the launch's integers, proved as below): a launcher written for views of one packed buffer
passes one set, and one that passes every set says they may differ; its kernel reading one by another's is an
error (``_twins_told``). An error where such tensors exist rests on that launch having run (wrong too): where the
budget's end leaves no time for it, the launcher reading the others by the one's strides is not ruled out, and
the finding is a warning that says so (a rotary kernel reading sin by cos's row stride, stopped there, would
otherwise be called broken for a caller who passes views of one packed buffer). The guard bands place
every tensor in its own buffer (strides kept, offset not), so a packed buffer's column slice is the
row-padded layout and a later one's offset is not kept.

What a launcher may do with a layout: refuse it (an assert on ``is_contiguous()`` or ``stride(-1) == 1``,
``x.view(-1, H)`` that torch refuses for a permuted or broadcast view, a tensor descriptor that
wants 16-byte strides): a loud error, its domain, a note; copy it (``.contiguous()``, ``.reshape``
where torch cannot view, which it does for a permuted view and not for a row-padded or interleaved
one): quiet, for what it reads. A launcher that writes its result in place into what ``.reshape``
copied leaves the caller's tensor unwritten: that is a wrong result like any other here.

One launch per layout where the kernel is right (every tensor that takes it at once: six in all), and
where one is wrong, each tensor alone, to name it. A layout whose misread repeats an earlier one's
(permuted, interleaved and broadcast after a wrong row-padded run; interleaved after a wrong
transposed one) is not tried for that tensor. Outputs are left as ``make_inputs`` made them, and the
result is compared with the reference of the same values (the tolerance and the error floor of every
comparison); the gaps of a view hold the guard bands' poison (NaN).

How wrong is wrong depends on what the launcher promised, which its own launch says
(``triton_compat.launch_ints``: the integers the kernels were given, against the contiguous run's):

- it passes the kernel every stride that only this layout has (the row stride of the row-padded view;
  the column stride of the transposed and interleaved ones; the strides of both permuted dims; for a
  broadcast, whose stride 0 is no number a launch can be seen given, the stride of dim 0 in the
  row-padded run: the same launcher code, now given 0), and the result is still wrong: an error
  (P206). It was told where every element is and read another. Shown twice: that a stride's value is
  among the integers the launch got and the contiguous launch did not is evidence only where the number
  follows the stride; a launch gets other numbers that change with the layout (a count it derives from
  the row stride, a block count, another tensor's stride) and one may equal a small stride by chance
  (an interleave step of 5 and a count of 5). So before an error, a second launch gives the tensor the
  same layout with other strides (the next padding or step whose strides are none of the integers either
  launch got, nor the first view's; for a broadcast, the row-padded view again): a stride counts as passed
  only where its value is among the new integers of both launches, and the second launch must be wrong
  too (or fault). An integer that equals the stride in both, the stride being a number no integer of the
  first launch was, follows it; one that does not was a coincidence, and the strides count as not passed
  (the rules below: a note or a warning). One launch more, only where an error would be reported. The
  strides are picked distinct to begin with, so the second launch is rarely needed and a coincidence
  rarely repeats: paddings of 16 elements a row that make no stride a power of two (Triton's block sizes,
  what next_power_of_2 makes of a size) nor an integer of the contiguous launch; steps that are odd primes
  (no product of a block size and a count); the interleaved second view's packed rows padded by at least a
  row, so that its row stride is no multiple of the step and nothing derived from the row stride follows
  the step;
- it passes the row stride and not the others of a layout that breaks what a row stride assumes:
  a transposed or interleaved view (Triton's convention: rows strided, the last dim contiguous), a
  permuted or 3-D broadcast view (the leading dims taken as one row index with that stride, which is
  what ``x.view(-1, H)`` assumes and torch refuses for these views): a note;
- it passes none of the tensor's strides (or some, not those of the layout), and neither copies nor
  refuses the view: it takes the tensor as contiguous without saying so, and a caller's view gives a
  wrong result silently. A warning for a matrix (row slices, ``.t()``, ``transpose(0, 1)``, packed
  columns and ``expand`` are everyday torch: the stride-assumption lesson, cases/noncontiguous-input),
  a note for a 1-D tensor (a strided vector is rare). Why not an error: the launcher's own code says
  nothing of views, and the kernel is right on every input ``make_inputs`` and the shapes fuzzing
  give; whether a view of what it only reads is in its contract is the author's word, not evidence.
  Correct launchers take the matrices they read as contiguous without a word all the time, their callers
  never handing them a view (the casebook's rng-offset-overflow and store-then-load-no-barrier fixed
  kernels, and fixed releases of real projects, at this writing): the guarantee often lives in the code
  above the launcher (a quantizer that clamps first, which makes a dense copy; a backward pass that makes
  its gradient contiguous before the call: docs/found.md), and nothing the run shows tells such a launcher
  from one whose callers pass views;
- it changes the tensor in place (the plain launch wrote it), the layout keeps the last dim contiguous
  (row-padded, permuted: a transposed, interleaved or 1-D strided view breaks the ``stride(-1) == 1`` nearly
  every launcher assumes, the note's rule above) and the launch wrote into the view's gaps
  (the guard bands between or around its elements changed): an error, whether it passes the row stride,
  some strides or none (where it passes that layout's strides the rules above hold: an error, or the
  warning of a tensor written by its twin's strides). An argument
  changed in place is the tensor torch code hands over as a view most of all: writing through a view is
  how torch code fills part of a larger buffer (``logits[:, :vocab]`` of a padded vocabulary, a cache's
  ``cache[layer]``, ``out[:, :n]``, a fused buffer's part). The gaps are not that tensor: in the caller's
  buffer they hold another tensor's elements (the rest of the padded or packed buffer), overwritten
  silently where no check of the result looks, at addresses the layout alone sets (not values read in
  the gaps, which hold the probe's poison and not the caller's data: so every caller who passes that view
  gets the same writes). A write outside a tensor is an error everywhere else in the probe (the guard
  bands, shape fuzzing) at any size the launcher accepts; a view it accepts is judged alike. A write of
  the gaps' own poison (NaN read there and written back: the interpreter keeps a NaN's payload through
  arithmetic) leaves them unchanged; where the run was wrong and the gaps kept their bytes, the launch is made
  once more with the guard bands holding a finite value (``GAP_FILL``), which an update read and written
  back changes (an optimizer's step walking the view as contiguous: torch-optimi 0.3.3's AdamW);
- an access outside memory (a fault, loud) is judged by the stride rules: an error where the launcher
  passes that layout's strides; where it takes the tensor as contiguous, the fault is that assumption's
  doing (an index vector misread through its gaps sends a gather anywhere: cases/histogram-lost-updates'
  correct kernel given a strided index vector faults on an H200, docs/measurements/layout-gpu-h200.log;
  the address came from the poison read in the gaps, not from the layout alone), a warning or a note as
  above.

On the GPU (``GPU_SIDE``) the same launches run in device memory, without the interpreter's bounds
check: an access outside a view reads the guard bands' poison and shows as a wrong result, and a store
outside it changes the guard bands. Under the interpreter the bounds check drops such a store before it
happens; it counts as written outside that input all the same (``stores_outside``), so that one launch is
judged alike on both backends.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

from harness.probe import execute as X
from harness.probe.context import budget_stop, cuda_usable, fmt, wrong
from harness.probe.detectors import Detector, backends
from harness.probe.findings import ERROR, INFO, WARNING, Code

ROW_PAD = 16  # a wider buffer's extra elements per row (times the tensor's place): 16-divisibility kept
MAX_ALONE = 4  # tensors tried one at a time where a combined run is wrong or raised (the largest first)
MAX_FINDINGS = 3

# Whether the detector runs on the GPU backend too (a probe with a GPU runs both backends: the GPU side lays
# the inputs out in device memory, without the interpreter's bounds check). The one switch: on, until a run of
# benchmarks/layout_gpu.py on a GPU says otherwise (its log committed under docs/measurements/).
GPU_SIDE = True


def row_padded(t, i: int = 0):
    pad = ROW_PAD * (i + 1)
    return t.new_empty((*t.shape[:-1], t.shape[-1] + pad))[..., :t.shape[-1]].copy_(t)


def transposed(t, i: int = 0):
    pad = ROW_PAD * (i + 1)  # the columns of a wider buffer: the column stride is one no size equals
    rows = t.shape[-2]
    return t.new_empty((*t.shape[:-2], t.shape[-1], rows + pad))[..., :rows].mT.copy_(t)


def odd_prime(i: int) -> int:
    """The ``i``-th odd prime (3, 5, 7, 11, ...): the steps of the strided and interleaved layouts. A prime is
    no product of a block size and a count, and no two of them divide one another."""
    n, seen = 1, -1
    while seen < i:
        n += 2
        seen += all(n % p for p in range(3, int(n ** 0.5) + 1, 2))
    return n


def strided(t, i: int = 0):
    step = odd_prime(i)
    return t.new_empty(step * t.shape[0])[::step].copy_(t)


def permuted(t, i: int = 0):
    """The two dims before the last swapped in memory, the last dim contiguous: ``x.transpose(-3, -2)`` of a
    contiguous buffer (a (batch, seq, hidden) tensor stored seq-major, attention's (batch, heads, seq, dim)
    from a (batch, seq, heads, dim) projection); the buffer's rows padded, so that every stride but the last
    is a number no size equals (a launch given it passes it)."""
    pad = ROW_PAD * (i + 1)
    lead = (*t.shape[:-3], t.shape[-2], t.shape[-3])
    return t.new_empty((*lead, t.shape[-1] + pad))[..., :t.shape[-1]].transpose(-3, -2).copy_(t)


def interleaved(t, i: int = 0, pad: int = 0):
    """Every ``step``-th column of a packed buffer from the second on, ``packed[..., 1::step]`` (real and
    imaginary parts, gate and up projections, rotary halves stored interleaved): the last dim strided;
    ``pad``: the packed buffer's rows that many elements wider (a slice of a wider buffer)."""
    step = odd_prime(i)
    return t.new_empty((*t.shape[:-1], t.shape[-1] * step + pad))[..., 1:t.shape[-1] * step:step].copy_(t)


def interleaved_again(t, i: int = 0):
    """``interleaved`` with the packed buffer's rows padded by a multiple of ``ROW_PAD`` at least one row of
    ``t`` wide: its row stride is then no multiple of the step times the columns (no number the launcher derives
    from the row stride, its quotient by the columns, follows the step from one launch to the other)."""
    return interleaved(t, i, pad=ROW_PAD * -(-t.shape[-1] // ROW_PAD))


def broadcast(t, i: int = 0):
    """The first row (index 0 of dim 0) expanded over dim 0, stride 0 there (``bias.expand(rows, -1)``, a mask
    or positions expanded over the batch). Other values than ``t``'s: the run compares it with the same
    values materialized (``_broadcast_run``)."""
    return t[:1].expand(t.shape)


@dataclass(frozen=True)
class Layout:
    make: Callable  # (tensor, its place) -> a view with the same values (broadcast: the values it stands for)
    words: str
    takes: Callable  # tensor -> whether it can be given in this layout (and the layout is not contiguous)
    dims: tuple  # the dims whose strides only this layout gives: a launch given them all passes its strides
    convention: str = ""  # the stride a launch given the row stride only leaves out, and what it assumes (a note)
    after: tuple = ()  # earlier layouts whose misread this one repeats: a tensor wrong there is not tried here
    again: Callable | None = None  # the second launch's view (``_again``), where not ``make`` with another place


LEADING = ("the strides of the dims before: its leading dims taken as one row index with that stride, as "
           "x.view(-1, H) would (which refuses this view; x.reshape(-1, H) copies it)")
LAYOUTS = {
    "row-padded": Layout(row_padded, "a slice of a wider buffer (rows padded)", lambda t: t.dim() >= 2, (-2,)),
    "strided": Layout(strided, "a strided view (every few elements of a buffer)", lambda t: t.dim() == 1, (-1,)),
    "transposed": Layout(transposed, "a transposed (column-major) view",
                         lambda t: t.dim() >= 2 and t.shape[-1] > 1 and t.shape[-2] > 1, (-1,),
                         "its column stride: Triton's convention, the last dim contiguous"),
    "permuted": Layout(permuted, "a view with the two dims before the last permuted (x.transpose(-3, -2) of a "
                                 "contiguous buffer)",
                       lambda t: t.dim() >= 3 and t.shape[-3] > 1 and t.shape[-2] > 1, (-3, -2),
                       LEADING, ("row-padded",)),
    "interleaved": Layout(interleaved, "a column slice of a packed buffer (packed[..., 1::k])",
                          lambda t: t.dim() >= 2 and t.shape[-1] > 1, (-1,),
                          "its column stride: Triton's convention, the last dim contiguous",
                          ("row-padded", "transposed"), interleaved_again),
    "broadcast": Layout(broadcast, "an expanded (broadcast) view, its first row repeated",
                        lambda t: t.dim() >= 2 and t.shape[0] > 1, (0,), LEADING, ("row-padded",)),
}
RUNS = (("row-padded",), ("transposed",), ("strided",), ("permuted",), ("interleaved",), ("broadcast",))
# the layout of each combined run (one kind each: a tensor read wrong in one layout cannot hide another's, a
# 1-D one read at a matrix's place); broadcast last: it needs the row-padded run's strides (``_passes``)


def read_by_reference(target, inputs: dict) -> tuple[set, bool]:
    """The inputs the reference takes (``call_with``'s rule), and whether it takes any (``**kwargs``)."""
    params = inspect.signature(target.reference).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return set(inputs), True
    return {k for k in inputs if k in params}, False


def candidates(target, inputs: dict) -> list[str]:
    """The tensor inputs to lay out otherwise: contiguous, not empty, not broadcast, read by the reference."""
    import torch

    read, _ = read_by_reference(target, inputs)
    return [k for k, v in inputs.items() if k in read and isinstance(v, torch.Tensor) and v.dim() >= 1
            and v.numel() > 1 and v.is_contiguous() and 0 not in v.stride() and v.layout == torch.strided]


def _skip(ctx) -> str | None:
    t = ctx.target
    try:
        inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    except Exception:  # noqa: BLE001  the reference detector says so
        return "make_inputs raised at the default sizes"
    if not candidates(t, inputs):
        return "no contiguous tensor input that the reference reads: no layout to vary"
    return None


def _relaid(inputs: dict, names: list, layouts: tuple, avoid: frozenset = frozenset(),
            same: bool = False) -> tuple[dict, list]:
    """``inputs`` with each of ``names`` in the first of ``layouts`` it takes (same values); (name, layout)
    of each changed (a layout that gives a contiguous tensor again, a (n, 1) transposed, is left out). The
    padding (or step) of each is the first of its place's that makes the strides the layout is judged by
    distinct (``_distinct``: outside ``avoid``, the contiguous launch's integers, and no power of two);
    ``same``: every one the padding of the first place (tensors of one shape then have one set of strides, as
    views of one packed buffer do)."""
    out, done = dict(inputs), []
    for i, k in enumerate(names):
        for lay in layouts:
            spec = LAYOUTS[lay]
            if spec.takes(inputs[k]):
                for j in (range(8) if same else range(i, i + 8 * len(names), len(names))):
                    v = spec.make(inputs[k], j)
                    if _distinct(v, spec.dims, avoid):
                        break
                if not v.is_contiguous():
                    out[k] = v
                    done.append((k, lay))
                break
    return out, done


def _distinct(v, dims, avoid) -> bool:
    """Whether the strides ``dims`` of ``v`` are numbers a launch is seen given only where it is given them: none
    among ``avoid`` (the integers the contiguous launch got, or the first of two launches got) and none a power
    of two (Triton's block sizes and warp counts, what next_power_of_2 makes of any size)."""
    return not any((s := abs(v.stride(d))) in avoid or s & (s - 1) == 0 for d in dims)


def _said(lay: str, v) -> str:
    return f"{LAYOUTS[lay].words}: stride {tuple(v.stride())}"


def _kept(given: dict) -> dict:
    """``execute.clone_inputs`` that keeps a broadcast view broadcast (its one row copied, expanded again)."""
    import torch

    out = X.clone_inputs(given)
    for k, v in given.items():
        if isinstance(v, torch.Tensor) and v.numel() and 0 in v.stride():
            row = v
            for d, st in enumerate(v.stride()):
                if st == 0:
                    row = row.narrow(d, 0, 1)
            out[k] = X.same_layout(row).expand(v.shape)
    return out


def run(ctx) -> list:
    ctx.budget.begin_share()  # a share of what is left: fuzzing and the diagnosis come after (budget.VARY_SHARE)
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)
    base, plain = _outcome(ctx, X.clone_inputs(inputs), ref, changed=True)
    if base != "right":
        return []  # wrong (or raised) at the defaults already: the reference detector's finding
    _, anything = read_by_reference(t, inputs)
    # a reference that takes every input (**kwargs) does not tell an output buffer from a value: the
    # tensors the launch wrote are then taken for outputs
    names = [k for k in candidates(t, inputs) if not (anything and k in plain.changed)]
    names.sort(key=lambda k: -inputs[k].numel())
    st = {"found": [], "refused": [], "base": plain.ints, "row_stride": set(), "dims": {}, "rows": {}, "wrong": {},
          "written": set(plain.changed), "names": names}
    ctx.board.layout_now = st["found"]  # what the budget's end keeps (partial)
    cut = False
    for layouts in RUNS:
        lay = layouts[0]
        these = [k for k in names if not set(LAYOUTS[lay].after) & st["wrong"].get(k, set())]
        if lay == "broadcast":
            cut = _broadcast_run(ctx, st, inputs, these)
        else:
            cut = _one_run(ctx, st, inputs, ref, these, layouts)
        if cut or st.get("lost"):
            break
    ctx.board.layout_now = None
    _twins_told(ctx, st)
    found = sorted(st["found"], key=lambda f: ("error", "warning", "info").index(f.severity))[:MAX_FINDINGS]
    if st["refused"] and all(f.severity == INFO for f in found):  # a refusal is news beside notes only
        found.append(ctx.finding("P206", f"the launcher raised when {'; '.join(st['refused'][:3])} (information: it "
                                         f"does not take that layout; a loud error, not a silent wrong result)"[:400],
                                 severity=INFO))
    if st.get("lost"):
        found.append(ctx.finding("P000", "the layouts after that access outside memory were not tried: it left the "
                                         "GPU's context unusable (CUDA's errors stick), so no launch of this process "
                                         "can run; the interpreter's side tries them", severity=INFO))
    return found + ([budget_stop(ctx, "the layouts not yet tried")] if cut else [])


def _one_run(ctx, st: dict, inputs: dict, ref, names: list, layouts: tuple, base: dict | None = None) -> bool:
    """One combined launch with each of ``names`` in ``layouts`` (``inputs``' values); where it is wrong and
    several were laid out, each alone (the largest first), the others as in ``base`` (default ``inputs``).
    True where the budget's end cut it."""
    given, done = _relaid(inputs, names, layouts, frozenset(abs(x) for x in st["base"]))
    return _launches(ctx, st, given, done, ref, base or inputs)


def _launches(ctx, st: dict, given: dict, done: list, ref, base: dict, seen: tuple | None = None) -> bool:
    """The combined launch (``seen``: its outcome, where it ran already), then each alone where it is wrong."""
    if not done:
        return False
    if seen is None and ctx.late():
        return True
    kind, c = seen or _outcome(ctx, given, ref)
    if kind == "right" or kind == "fault" or len(done) == 1:
        _judge(ctx, st, kind, c, given, done, ref, base)
        return False
    for k, lay in done[:MAX_ALONE]:  # which one (the largest first)
        if st.get("lost"):
            return False
        if ctx.late():
            return True
        alone = {**base, k: given[k]}
        kind, c = _outcome(ctx, alone, ref)
        _judge(ctx, st, kind, c, alone, [(k, lay)], ref, base)
    return False


def _shared(ctx, st: dict, kind: str, given: dict, done: list, ref, base: dict) -> list | None:
    """The tensors of the same shape as the one laid out, where a launch given its strides (``_passes``: "all",
    the caller's word) is wrong (or faults) with them as made and right with them all in its layout, with its
    very strides (two views of one packed buffer: ``packed[..., :n]``, ``packed[..., n:2n]``, a fused QKV's
    heads, a quantized weight's scales and zeros, rotary cos and sin): the launcher reads them by the one
    tensor's strides. [] where there are none, or that launch is wrong too (one launch more, only then); None
    where there are some and the budget's end leaves no time to try: an error cannot rest on it then."""
    if kind not in ("wrong", "fault") or len(done) != 1 or done[0][1] == "broadcast":
        return []
    k, lay = done[0]
    v = given[k]
    group = _same_shape(st, k, v, base)
    if not group:
        return []
    if ctx.late() or st.get("lost"):
        return None
    shared, laid = _relaid(base, [k, *group], (lay,), frozenset(abs(x) for x in st["base"]), same=True)
    if len(laid) < 2 or _outcome(ctx, shared, ref)[0] != "right":
        return []
    return [n for n, _ in laid if n != k]


def _broadcast_run(ctx, st: dict, inputs: dict, names: list) -> bool:
    """Each matrix the launch only reads (not written by the plain run: an expanded tensor is no place to write,
    torch refuses that too), given as its first row expanded over dim 0 (stride 0). These are other values than
    ``make_inputs``' (rows repeated), so: the reference must take the expanded view and give what it gives for
    the same values materialized (torch code that reads a broadcast reads its values: a reference that raises
    on it or reads it otherwise says the view is not its input), and the kernel must be right on the
    materialized values; only then is the expanded run judged against the same reference."""
    import torch

    t = ctx.target
    names = [k for k in names if k not in st["written"] and LAYOUTS["broadcast"].takes(inputs[k])]
    if not names:
        return False
    wide = {**inputs, **{k: broadcast(inputs[k]) for k in names}}
    same = {**inputs, **{k: wide[k].contiguous() for k in names}}
    try:
        ref = X.reference(t, same)
        seen = X.reference_value(t, _kept(wide))
        agree = seen.shape == ref.shape and torch.equal(seen.isnan(), ref.isnan()) and torch.equal(
            seen.nan_to_num(), ref.nan_to_num())
    except Exception:  # noqa: BLE001  the reference does not take the view (or these values): not its input
        return False
    if not agree:
        return False
    if ctx.late():
        return True
    kind, c = _outcome(ctx, wide, ref)
    if kind == "right":
        _judge(ctx, st, kind, c, wide, [(k, "broadcast") for k in names], ref, same)
        return False
    if ctx.late():
        return True
    if _outcome(ctx, same, ref)[0] != "right":  # asked only now: one launch fewer where the expanded run is right
        return False  # the repeated rows are outside what the kernel gets right: nothing to compare with
    return _launches(ctx, st, wide, [(k, "broadcast") for k in names], ref, same, (kind, c))


def _outcome(ctx, given: dict, ref, changed: bool = False) -> tuple[str, object]:
    """("right" | "wrong" | "raised" | "fault", the Call) of one launch on ``given`` against ``ref``, as
    today's GPUs run it (0 in masked lanes), bounds-checked under the interpreter (a kernel that reads a view
    as contiguous may index far outside it); ``Call.ints``: every integer argument its launches got."""
    from harness.probe.context import device_fault
    from harness.run.triton_compat import launch_ints

    with ctx.instrument(poison_masked=False, memcheck=True) as rec, launch_ints() as ints:
        c = ctx.call(_kept(given), ref=ref, changed=changed)
    c.ints = ints
    stores_outside(c, rec)
    if c.error is not None:
        return ("fault" if device_fault(c.error) else "raised"), c
    if c.guard.get("wrote_past_end") or not c.cmp["close"]:
        return "wrong", c
    return "right", c


def _given(v, new: set) -> set:
    """The dims of ``v`` whose stride (above 1) is among ``new``, a launch's integers."""
    return {d for d in range(v.dim()) if v.stride(d) > 1 and v.stride(d) in new}


def _passes(st: dict, new: set, k: str, lay: str, v, again=None) -> str:
    """What the launch was given of ``v``'s strides in this layout: "all" (every stride only this layout has:
    it passes the strides for it), "row" (the row stride and not the others: the convention the layout names),
    "some" or "none". A broadcast's stride 0 is no number a launch can be seen given: it passes it where it
    passed that dim's stride in the row-padded run (the same launcher code, now given 0).
    ``again``: the second launch's (view, its new integers) (``_again``): a stride counts as passed only where
    its value is among the new integers of both launches (the integers follow the stride); False where that
    launch showed nothing (it was right, raised, or not made): the layout's own strides count as not passed."""
    dims = LAYOUTS[lay].dims
    own = {d % v.dim() for d in dims}
    if lay == "broadcast":
        seen = set(st["dims"].get(k, set()))
        if again is False:
            seen -= own
        elif again is not None:
            seen &= _given(*again)
        if own <= seen:
            return "all"
        return "row" if v.dim() - 2 in seen else ("some" if seen else "none")
    shown = _given(v, new)
    if again is False:
        shown -= own
    elif again is not None:
        shown &= _given(*again)

    def passed(d: int) -> bool:
        return d % v.dim() in shown

    if all(passed(d) for d in dims):
        return "all"
    row = v.dim() >= 2 and (k in st["row_stride"] or passed(-2))
    if row and LAYOUTS[lay].convention:
        return "row"
    return "some" if row or any(passed(d) for d in range(v.dim())) else "none"


def _again(ctx, st: dict, given: dict, k: str, lay: str, c, ref) -> tuple | None:
    """The second launch an error rests on: ``given`` with ``k`` in the same layout again (the layout's
    ``again``, else ``make``), its values the same and its strides other numbers: every stride above 1 (the
    layout's own, and the row stride the note's rule reads) distinct (``_distinct``) from every integer the
    contiguous launch and the first launch got, and from the first view's. For a broadcast, whose stride 0 no
    launch shows, the row-padded view again (its first launch, ``st["rows"]``, said which strides the launcher
    passes). (kind, view, its new integers), or None where the budget's end leaves no time for it (or a
    broadcast's tensor had no row-padded run)."""
    if ctx.late() or st.get("lost"):
        return None
    own = "row-padded" if lay == "broadcast" else lay
    spec = LAYOUTS[own]
    first, ints = st["rows"].get(k, (None, set())) if lay == "broadcast" else (given[k], c.ints)
    if first is None:
        return None
    dims = [d for d in range(first.dim()) if first.stride(d) > 1]  # the layout's own, and the row stride
    avoid = {abs(x) for x in st["base"] | ints} | {abs(first.stride(d)) for d in dims}
    values = given[k].contiguous()  # the same values (a broadcast's: its rows repeated, materialized)
    for j in range(16):  # (none distinct: the last, whose strides the first view's are not either)
        v = (spec.again or spec.make)(values, j)
        if _distinct(v, dims, avoid):
            break
    kind, c2 = _outcome(ctx, {**given, k: v}, ref)
    return kind, v, {abs(x) for x in c2.ints - st["base"]}


def _prove(ctx, st: dict, given: dict, k: str, lay: str, c, ref, new: set) -> tuple[str, str]:
    """The second launch behind an error (``_again``): what ``k``'s strides count as (``_passes``: "all" only where
    the same layout with other strides is wrong too and the launch's integers hold the new strides), and the
    words that say so."""
    again = _again(ctx, st, given, k, lay, c, ref)
    shown = again is not None and (lay == "broadcast" or again[0] in ("wrong", "fault"))
    how = _passes(st, new, k, lay, given[k], (again[1], again[2]) if shown else False)
    if how == "all" and lay == "broadcast":
        return how, f", as again in a row-padded run at stride {tuple(again[1].stride())}"
    if how == "all":
        return how, f", wrong again at stride {tuple(again[1].stride())}"
    if again is None:
        return how, "; not tried again with other strides: no proof that it passes them"
    return how, (f"; a number the launch got equalled a stride by chance (not at stride "
                 f"{tuple(again[1].stride())}{'' if shown else ', ' + again[0] + ' there'})")


def _note_rows(st: dict, done: list, given: dict, how: dict, new: set, c) -> None:
    """What a row-padded run showed of each tensor's strides, for the later layouts' rules."""
    for n, lay_n in done:
        if lay_n == "row-padded":
            v = given[n]
            if how[n] == "all":
                st["row_stride"].add(n)
            st["dims"][n] = _given(v, new) - {v.dim() - 1}
            st["rows"][n] = (v, c.ints)


def _judge(ctx, st: dict, kind: str, c, given: dict, done: list, ref, base: dict) -> None:
    """The finding of one run with ``done`` (name, layout) laid out otherwise, by what the launch was given
    (``_passes``): every stride only that layout has (wrong is an error), the row stride only where the layout
    breaks what a row stride assumes (the last dim contiguous, the leading dims one row index: a note), or
    none of them (it takes the tensor as contiguous without saying so and neither copies nor refuses a view:
    a warning for a matrix, whose views are everyday torch; a note for a 1-D tensor, whose strided views are
    rare). An access outside memory is an error only where the launcher passes that layout's strides; where it
    takes the tensor as contiguous the fault is that assumption's doing, judged as above. An error rests on a
    second launch (``_again``): the same layout with other strides, wrong too, its integers holding the new
    strides; where it is right, raises or gets other numbers, the launch's integers held the first strides by
    chance, and the strides count as not passed (the warning or the note above)."""
    from harness.errors import error_line
    from harness.probe.context import label

    if kind == "fault" and getattr(ctx, "backend", None) == "gpu" and not cuda_usable():
        # an illegal address leaves the CUDA context unusable (a grid past CUDA's limits does not): every later
        # launch of this process raises the same error, so a second launch (the proof an error rests on, a twin's
        # run) would show the broken context, not the kernel
        st["lost"] = True
    new = {abs(x) for x in c.ints - st["base"]}
    how = {n: _passes(st, new, n, lay, given[n]) for n, lay in done}
    k, lay = done[0]
    proof = ""
    if kind in ("wrong", "fault") and how[k] == "all":
        how[k], proof = _prove(ctx, st, given, k, lay, c, ref, new)
    _note_rows(st, done, given, how, new, c)
    if kind == "right":
        return
    when = " and ".join(f"'{n}' is {_said(lay_n, given[n])}" for n, lay_n in done)
    if kind == "raised":
        st["refused"].append(f"{when}: {error_line(c.error)}"[:200])
        return
    for n, lay_n in done:
        st["wrong"].setdefault(n, set()).add(lay_n)
    if kind == "fault":
        what = f"raised {error_line(c.error)}"
    elif past := c.guard.get("wrote_past_end"):
        what = f"wrote outside {', '.join(label(n) for n in past)}"
    else:
        what = wrong(c.cmp)
    shared = _shared(ctx, st, kind, given, done, ref, base) if how[k] == "all" else []
    severity, why = _severity(kind, k, lay, given[k], how[k], proof, shared, _same_shape(st, k, given[k], base))
    if how[k] != "all" and (_wrote_gaps(st, kind, k, lay, c)
                            or _wrote_gaps_finite(ctx, st, kind, k, lay, c, given, ref)):
        severity, why = ERROR, _GAPS.format(k=k, why=why.removeprefix("information: "))
    if len(done) == 1 and how[k] == "all":
        st.setdefault("passed", set()).add((k, lay))
        if shared:
            st.setdefault("twins", []).append((len(st["found"]), k, lay, shared, when, what))
    st["found"].append(_p206(ctx, when, what, why, severity))


def _p206(ctx, when: str, what: str, why: str, severity: str):
    """The finding of a wrong run with ``when`` laid out otherwise: ``what`` went wrong and ``why`` it counts so."""
    return ctx.finding("P206", f"wrong when {when}, at {fmt(ctx.target.sizes)} (right when contiguous, the same "
                               f"values): {what} ({why})"[:500], severity=severity, sizes=dict(ctx.target.sizes))


def _twins_told(ctx, st: dict) -> None:
    """The warning of a tensor read by its twin's strides (``_severity``: views of one packed buffer share them)
    becomes an error where the launch was given each twin's own strides too: each alone in the layout was wrong
    with its strides among the launch's integers (``_passes``, proved by a second launch). A launcher written for
    views of one packed buffer passes one set; one that passes every tensor's strides says they may differ, and
    its kernel reads a tensor by another's although told where its elements are."""
    for i, k, lay, shared, when, what in st.get("twins", []):
        told = [n for n in shared if (n, lay) in st.get("passed", ())]
        if told != shared:
            continue
        them = ", ".join(f"'{n}'" for n in told)
        st["found"][i] = _p206(ctx, when, what, f"the launcher passes the strides of '{k}' and of {them}, yet the "
                                                f"kernel reads one by the other's: wrong whenever they differ; read "
                                                f"each through its own", ERROR)


_GAPS = ("'{k}' is an argument the launch changes in place, and it wrote into the view's gaps: memory that is not "
         "'{k}', another tensor's elements in the caller's buffer (the rest of a packed or padded buffer) overwritten "
         "silently, at addresses set by the layout alone; {why}")


def _wrote_gaps(st: dict, kind: str, k: str, lay: str, c) -> bool:
    """Whether the launch wrote outside ``k``'s elements into the gaps of its view (the guard bands), ``k`` being a
    tensor the plain launch changes in place (``st["written"]``): an in-place write through a view that leaves the
    view. Not for a broadcast (no tensor the launch writes is given one), a fault (judged by the stride rule), nor
    where the launcher passes that layout's strides (``_severity``'s rules: an error, or a warning where it writes
    ``k`` by a twin's strides, right for views of one packed buffer)."""
    return (kind == "wrong" and lay in LAST_DIM_KEPT and k in st["written"]
            and k in (c.guard.get("wrote_past_end") or {}))


GAP_FILL = 1.375  # the gaps' finite fill for the second look (``_wrote_gaps_finite``): no fixed point of an update


def _wrote_gaps_finite(ctx, st: dict, kind: str, k: str, lay: str, c, given: dict, ref) -> bool:
    """``_wrote_gaps`` once more where the first launch's gaps showed no write: the same launch with the guard
    bands (the gaps among them) holding ``GAP_FILL`` instead of the poison. A kernel that walks the view as
    contiguous reads the gaps' NaN and writes a NaN back, which keeps the poison's bytes (the interpreter carries
    a NaN's payload through arithmetic): unseen. A finite value read there and updated (x - lr * g) changes."""
    if not (kind == "wrong" and lay in LAST_DIM_KEPT and k in st["written"] and given[k].dtype.is_floating_point
            and not (c.guard.get("wrote_past_end") or {}).get(k)) or ctx.late():
        return False
    with ctx.instrument(poison_masked=False, memcheck=True) as rec:
        again = ctx.call(_kept(given), ref=ref, finite=GAP_FILL)
    stores_outside(again, rec)
    return again.error is None and k in (again.guard.get("wrote_past_end") or {})


def stores_outside(c, rec) -> None:
    """The interpreter's bounds check (``rec``, its Recorder; None on a GPU) drops a store or an atomic outside a
    tensor's view before it happens, where a GPU makes it: into the guard bands around the view, which count it
    as a write outside that tensor (``wrote_past_end``). Each such dropped access is counted there too, for the
    input whose view the kernel's pointer was computed from (the bounds check's span of it), so that both backends
    judge one launch alike: a launcher that walks a permuted in-place view as contiguous wrote past it on the
    H200 (an error there, P206) and was only a note under the interpreter."""
    if rec is None or c.error is not None:
        return
    past = c.guard.setdefault("wrote_past_end", {})
    for (kind, _tensor, _side, _line), hit in rec.oob.items():
        if kind not in ("store", "atomic"):
            continue
        lo, hi = hit["span"]
        name = next((n for n, (a, b) in c.views.items() if a < hi and lo < b), None)
        if name is not None:
            past[name] = past.get(name, 0) + hit["lanes"]


# the layouts that keep the last dim contiguous: the gap-write error holds there. A transposed, interleaved or
# strided (1-D) view breaks stride(-1) == 1, which nearly every Triton launcher assumes of what it writes as
# of what it reads (this module's note for the row stride alone); a write into such a view's gaps is that
# assumption's hazard, judged by the stride rules (a note or a warning), not an error
LAST_DIM_KEPT = ("row-padded", "permuted")


def _same_shape(st: dict, k: str, v, base: dict) -> list:
    """The other tensors laid out by the detector that have ``v``'s shape (a launcher may read them by ``k``'s
    strides)."""
    return [n for n in st["names"] if n != k and n in base and tuple(base[n].shape) == tuple(v.shape)]


def _severity(kind: str, k: str, lay: str, v, how: str, proof: str, shared: list | None, group: list) -> tuple:
    """The severity of a wrong (or faulting) run and why (``_judge``): by what the launch was given of ``k``'s
    strides (``how``), and, where it was given them all, whether it reads the other tensors of that shape by them
    (``shared``: ``_shared``'s answer; None: not tried, for the budget's end, an error then not shown)."""
    if how == "all" and shared:
        them = ", ".join(f"'{n}'" for n in shared)
        return WARNING, (f"the launcher passes the strides of '{k}' and reads {them} by them: right when they share "
                         f"them, as views of one packed buffer do (packed[..., :n], packed[..., n:2n]), wrong when "
                         f"they differ; pass each tensor's own strides, or assert they are equal")
    if how == "all" and shared is None:
        them = ", ".join(f"'{n}'" for n in group)
        return WARNING, (f"the launcher passes the kernel the strides of that layout{proof}; not tried, at the end of "
                         f"the probe's budget, whether it reads {them} (the same shape) by them, as a launcher written "
                         f"for views of one packed buffer does: not shown wrong for a caller who passes such views")
    if how == "all":
        if kind == "fault" and lay != "broadcast":
            return ERROR, f"an access outside memory, with the strides of that layout passed{proof}"
        return ERROR, f"the launcher passes the kernel the strides of that layout{proof}"
    if how == "row":
        return INFO, (f"information: the launcher passes the row stride of '{k}' and not "
                      f"{LAYOUTS[lay].convention}{proof}; {k}.contiguous() or an assert in the launcher makes this "
                      f"view safe")
    severity = WARNING if v.dim() >= 2 else INFO
    said = f"none of the strides of '{k}'" if how == "none" else f"some strides of '{k}', not those of that layout,"
    return severity, (f"{'information: ' if severity == INFO else ''}the launcher passes {said} and neither copies "
                      f"nor refuses a view: a caller's view gives this silently{proof}; {k}.contiguous() or an assert "
                      f"in the launcher makes it safe")


def partial(ctx) -> list:
    """The budget's end stopped it in a run: the findings so far."""
    found, ctx.board.layout_now = ctx.board.layout_now or [], None
    return list(found)


P206 = Code("P206", WARNING, "wrong when an input that the reference reads is given, with the same values, in a "
                             "layout torch users pass (a slice of a wider buffer, a transposed view, a strided 1-D "
                             "view, leading dims permuted, a packed buffer's interleaved columns, a broadcast) that "
                             "the launcher neither copies nor refuses, and none of whose strides it passes: the kernel "
                             "takes it as contiguous", ("noncontiguous-input",),
            otherwise="an error where the launcher passes the kernel the strides of that layout (and the result "
                      "is wrong or the kernel reads outside memory), or where the launch writes into the gaps of a "
                      "view of a tensor it changes in place (memory outside it); info for a 1-D tensor, where it passes the row stride only and the layout "
                      "breaks what a row stride assumes (a transposed or interleaved view: the last dim contiguous; "
                      "permuted leading dims: one row index), and where the launcher raises on the layout (its "
                      "domain)")


DETECTOR = Detector("layout", "the default sizes with each input in another memory layout (the same values)", run,
                    backends=backends(GPU_SIDE), process={"interpreter": 1, "gpu": 0}, rank=1, skip=_skip,
                    partial=partial, codes=(P206,))
