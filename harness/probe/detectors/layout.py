"""The same values in another memory layout: a correct kernel's result depends on the values of its
inputs, not on how the caller laid them out, unless the launcher refuses the layout (an assert, an
error: its domain, a note) or copies it (``.contiguous()``: it passes).

At the default sizes, each tensor that ``make_inputs`` gives contiguous and the reference reads
(a value, an in-place argument; not an output buffer the reference never sees) is given again, with
the same values, in a layout torch users commonly pass:

- "row-padded": a slice of a wider buffer, ``torch.empty(rows, cols + 16)[:, :cols]`` (a fused QKV's
  head, a padded vocabulary): rows ``cols + 16`` elements apart, each row contiguous;
- "transposed": a column-major view, ``w.t()`` of a (cols, rows + 16) buffer's first rows columns (the
  padding makes its column stride a number no size equals);
- "strided" (1-D): every third element of a buffer (``buf[::3]``, a column ``x[:, j]``).

One launch per layout where the kernel is right (every tensor that takes it at once: three in all), and
where one is wrong, each tensor alone, to name it. Outputs are left as ``make_inputs`` made them, and
the result is compared with the reference of the same values (the tolerance and the error floor of
every comparison); the gaps of a view hold the guard bands' poison (NaN).

How wrong is wrong depends on what the launcher promised, which its own launch says
(``triton_compat.launch_ints``: the integers the kernels were given, against the contiguous run's):

- it passes the kernel the stride that only this layout has (the row stride of the row-padded view,
  the column stride of the transposed one), and the result is still wrong: an error (P206);
- it passes the row stride and not the column stride, and a transposed view is wrong: Triton's
  convention (rows strided, the last dim contiguous), a note;
- it passes none of the tensor's strides, and neither copies nor refuses the view: it takes the tensor
  as contiguous without saying so, and a caller's view gives a wrong result silently. A warning for a
  matrix (row slices and ``.t()`` are everyday torch: the stride-assumption lesson,
  cases/noncontiguous-input), a note for a 1-D tensor (a strided vector is rare);
- an access outside memory is an error whatever it was given.
"""

from __future__ import annotations

import inspect

from harness.probe import execute as X
from harness.probe.context import fmt, wrong
from harness.probe.detectors import Detector
from harness.probe.findings import ERROR, INFO, WARNING, Code

ROW_PAD = 16  # a wider buffer's extra elements per row (times the tensor's place): 16-divisibility kept
MAX_ALONE = 4  # tensors tried one at a time where a combined run is wrong or raised (the largest first)
MAX_FINDINGS = 3


def row_padded(t, i: int = 0):
    pad = ROW_PAD * (i + 1)
    return t.new_empty((*t.shape[:-1], t.shape[-1] + pad))[..., :t.shape[-1]].copy_(t)


def transposed(t, i: int = 0):
    pad = ROW_PAD * (i + 1)  # the columns of a wider buffer: the column stride is one no size equals
    rows = t.shape[-2]
    return t.new_empty((*t.shape[:-2], t.shape[-1], rows + pad))[..., :rows].mT.copy_(t)


def strided(t, i: int = 0):
    step = 3 + i
    return t.new_empty(step * t.shape[0])[::step].copy_(t)


# layout -> (how it is made, what it is in words, whether a tensor takes it, the stride that only this layout
# gives: a launch given it passes the tensor's strides for this layout)
LAYOUTS = {
    "row-padded": (row_padded, "a slice of a wider buffer (rows padded)", lambda t: t.dim() >= 2, -2),
    "strided": (strided, "a strided view (every few elements of a buffer)", lambda t: t.dim() == 1, -1),
    "transposed": (transposed, "a transposed (column-major) view", lambda t: t.dim() >= 2 and t.shape[-1] > 1
                   and t.shape[-2] > 1, -1),
}
RUNS = (("row-padded",), ("transposed",), ("strided",))  # the layout of each combined run (one kind each: a
# tensor read wrong in one layout cannot hide another's, a 1-D one read at a matrix's place)


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


def _relaid(inputs: dict, names: list, layouts: tuple) -> tuple[dict, list]:
    """``inputs`` with each of ``names`` in the first of ``layouts`` it takes (same values); (name, layout)
    of each changed (a layout that gives a contiguous tensor again, a (n, 1) transposed, is left out)."""
    out, done = dict(inputs), []
    for i, k in enumerate(names):
        for lay in layouts:
            make, _, takes, _ = LAYOUTS[lay]
            if takes(inputs[k]):
                v = make(inputs[k], i)
                if not v.is_contiguous():
                    out[k] = v
                    done.append((k, lay))
                break
    return out, done


def _said(lay: str, v) -> str:
    return f"{LAYOUTS[lay][1]}: stride {tuple(v.stride())}"


def run(ctx) -> list:
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
    st = {"found": [], "refused": [], "base": plain.ints, "row_stride": set()}
    ctx.board.layout_now = st["found"]  # what the budget's end keeps (partial)
    cut = False
    for layouts in RUNS:
        given, done = _relaid(inputs, names, layouts)
        if not done:
            continue
        if cut := ctx.late():
            break
        kind, c = _outcome(ctx, given, ref)
        if kind == "right" or kind == "fault" or len(done) == 1:
            _judge(ctx, st, kind, c, given, done)
            continue
        for k, lay in done[:MAX_ALONE]:  # which one (the largest first)
            if cut := ctx.late():
                break
            alone, one = _relaid(inputs, [k], (lay,))
            _judge(ctx, st, *_outcome(ctx, alone, ref), alone, one)
        if cut:
            break
    ctx.board.layout_now = None
    found = sorted(st["found"], key=lambda f: ("error", "warning", "info").index(f.severity))[:MAX_FINDINGS]
    if st["refused"] and not found:
        found.append(ctx.finding("P206", f"the launcher raised when {'; '.join(st['refused'][:3])} (information: it "
                                         f"does not take that layout; a loud error, not a silent wrong result)"[:400],
                                 severity=INFO))
    return found + ([_cut(ctx)] if cut else [])


def _outcome(ctx, given: dict, ref, changed: bool = False) -> tuple[str, object]:
    """("right" | "wrong" | "raised" | "fault", the Call) of one launch on ``given`` against ``ref``, as
    today's GPUs run it (0 in masked lanes), bounds-checked under the interpreter (a kernel that reads a view
    as contiguous may index far outside it); ``Call.ints``: every integer argument its launches got."""
    from harness.probe.context import device_fault
    from harness.run.triton_compat import launch_ints

    with ctx.instrument(poison_masked=False, memcheck=True), launch_ints() as ints:
        c = ctx.call(X.clone_inputs(given), ref=ref, changed=changed)
    c.ints = ints
    if c.error is not None:
        return ("fault" if device_fault(c.error) else "raised"), c
    if c.guard.get("wrote_past_end") or not c.cmp["close"]:
        return "wrong", c
    return "right", c


def _judge(ctx, st: dict, kind: str, c, given: dict, done: list) -> None:
    """The finding of one run with ``done`` (name, layout) laid out otherwise, by what the launch was given:
    a stride only that layout has (the launcher passes the strides for it: wrong is an error), a row stride
    only (transposed: Triton's convention, rows strided and the last dim contiguous: a note), or none of the
    tensor's strides (it takes the tensor as contiguous without saying so and neither copies nor refuses a
    view: a warning for a matrix, whose row-padded and transposed views are everyday torch; a note for a
    1-D tensor, whose strided views are rare)."""
    from harness.errors import error_line
    from harness.probe.context import label

    new = c.ints - st["base"]
    passed = {k for k, lay in done if abs(given[k].stride()[LAYOUTS[lay][3]]) in new}
    st["row_stride"] |= {k for k, lay in done if lay == "row-padded" and k in passed}
    if kind == "right":
        return
    when = " and ".join(f"'{k}' is {_said(lay, given[k])}" for k, lay in done)
    if kind == "raised":
        st["refused"].append(f"{when}: {error_line(c.error)}"[:200])
        return
    if kind == "fault":
        what = f"raised {error_line(c.error)}"
    elif past := c.guard.get("wrote_past_end"):
        what = f"wrote outside {', '.join(label(n) for n in past)}"
    else:
        what = wrong(c.cmp)
    k, lay = done[0]
    if kind == "fault":
        severity, why = ERROR, "an access outside memory"
    elif k in passed:
        severity, why = ERROR, "the launcher passes the kernel the strides of that layout"
    elif lay == "transposed" and k in st["row_stride"]:
        severity, why = INFO, (f"information: the launcher passes the row stride of '{k}' and not its column stride: "
                               f"Triton's convention, the last dim contiguous; x.contiguous() or an assert in the "
                               f"launcher makes a transposed view safe")
    else:
        severity = WARNING if given[k].dim() >= 2 else INFO
        why = (f"{'information: ' if severity == INFO else ''}the launcher passes none of the strides of '{k}' and "
               f"neither copies nor refuses a view: a caller's view gives this silently; {k}.contiguous() or an "
               f"assert in the launcher makes it safe")
    st["found"].append(ctx.finding("P206", f"wrong when {when}, at {fmt(ctx.target.sizes)} (right when contiguous, "
                                           f"the same values): {what} ({why})"[:500], severity=severity,
                                   sizes=dict(ctx.target.sizes)))


def _cut(ctx):
    return ctx.finding("P000", f"layout stopped at the end of the probe's budget (--budget "
                               f"{ctx.options.get('budget', 0):g}s): the layouts not yet tried are not checked",
                       severity=INFO)


def partial(ctx) -> list:
    """The budget's end stopped it in a run: the findings so far."""
    found, ctx.board.layout_now = ctx.board.layout_now or [], None
    return list(found)


P206 = Code("P206", WARNING, "wrong when an input that the reference reads is given, with the same values, in a "
                             "layout torch users pass (a slice of a wider buffer, a transposed view, a strided 1-D "
                             "view) that the launcher neither copies nor refuses, and none of whose strides it passes: "
                             "the kernel takes it as contiguous", ("noncontiguous-input",),
            otherwise="an error where the launcher passes the kernel the strides of that layout (or the kernel reads "
                      "outside memory); info for a 1-D tensor, for a transposed view where it passes the row stride "
                      "only (Triton's convention: the last dim contiguous), and where the launcher raises on the "
                      "layout (its domain)")

# The interpreter's side only, for now: it has not been run on a GPU yet (no device time was left when it
# landed), and a default detector must not reach GPU users unmeasured. A probe on a GPU machine runs both
# backends at once (gpu+interpreter), so its interpreter side still lays the inputs out.
DETECTOR = Detector("layout", "the default sizes with each input in another memory layout (the same values)", run,
                    process={"interpreter": 1}, rank=1, skip=_skip, partial=partial, codes=(P206,))
