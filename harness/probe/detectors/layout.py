"""The same values in another memory layout: a correct kernel's result depends on the values of its
inputs, not on how the caller laid them out, unless the launcher refuses the layout (an assert, an
error: its domain, a note) or copies it (``.contiguous()``: it passes).

At the default sizes, each tensor that ``make_inputs`` gives contiguous and the reference reads
(a value, an in-place argument; not an output buffer the reference never sees) is given again, with
the same values, in a layout torch users commonly pass:

- "row-padded": a slice of a wider buffer, ``torch.empty(rows, cols + 16)[:, :cols]`` (a fused QKV's
  head, a padded vocabulary): rows ``cols + 16`` elements apart, each row contiguous;
- "transposed": ``x.mT.contiguous().mT``, a transposed-then-transposed-back copy (``weight.t()``):
  column-major in the last two dims;
- "strided" (1-D): every other element of a buffer twice as long (``buf[::2]``, a column ``x[:, j]``).

Two launches in all where the kernel is right (every such tensor in its row-padded or strided layout at
once, then every matrix transposed); where one is wrong, each tensor alone, to name it. Outputs are left
as ``make_inputs`` made them, and the result is compared with the reference of the same values (the
tolerance and the error floor of every comparison). A kernel that reads a view as if it were contiguous
reads the gaps (the guard bands' poison: NaN) or reads the right values at the wrong places: P206, the
stride-assumption lesson (cases/noncontiguous-input).
"""

from __future__ import annotations

import inspect

from harness.probe import execute as X
from harness.probe.context import fmt, wrong
from harness.probe.detectors import Detector
from harness.probe.findings import ERROR, INFO, Code

ROW_PAD = 16  # extra elements per row of the wider buffer: a stride of cols + 16 keeps Triton's 16-divisibility
MAX_ALONE = 4  # tensors tried one at a time where a combined run is wrong or raised (the largest first)
MAX_FINDINGS = 3


def row_padded(t):
    buf = t.new_empty((*t.shape[:-1], t.shape[-1] + ROW_PAD))
    return buf[..., :t.shape[-1]].copy_(t)


def transposed(t):
    return t.mT.contiguous().mT


def strided(t):
    return t.new_empty(2 * t.shape[0])[::2].copy_(t)


# layout -> (how it is made, what it is in words, whether a tensor of these dims takes it)
LAYOUTS = {
    "row-padded": (row_padded, "a slice of a wider buffer (rows padded by {pad} elements)", lambda t: t.dim() >= 2),
    "strided": (strided, "a strided view (every other element of a buffer)", lambda t: t.dim() == 1),
    "transposed": (transposed, "a transposed (column-major) view", lambda t: t.dim() >= 2 and t.shape[-1] > 1
                   and t.shape[-2] > 1),
}
RUNS = (("row-padded", "strided"), ("transposed",))  # the layouts of each combined run


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
            and v.numel() > 1 and v.is_contiguous() and 0 not in v.stride() and not v.is_sparse]


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
    for k in names:
        for lay in layouts:
            make, _, takes = LAYOUTS[lay]
            if takes(inputs[k]):
                v = make(inputs[k])
                if not v.is_contiguous():
                    out[k] = v
                    done.append((k, lay))
                break
    return out, done


def _said(lay: str, v) -> str:
    return f"{LAYOUTS[lay][1].format(pad=ROW_PAD)}: stride {tuple(v.stride())}"


def run(ctx) -> list:
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)
    with ctx.instrument(poison_masked=False):  # as today's GPUs run it (0 in masked lanes), every run alike
        base = ctx.call(X.clone_inputs(inputs), ref=ref, changed=True)
    if base.error is not None or not base.cmp["close"]:
        return []  # wrong (or raised) at the defaults already: the reference detector's finding
    _, anything = read_by_reference(t, inputs)
    # a reference that takes every input (**kwargs) does not tell an output buffer from a value: the
    # tensors the launch wrote are then taken for outputs
    names = [k for k in candidates(t, inputs) if not (anything and k in base.changed)]
    names.sort(key=lambda k: -inputs[k].numel())
    found, refused = [], []
    ctx.board.layout_now = found  # what the budget's end keeps (partial)
    for layouts in RUNS:
        given, done = _relaid(inputs, names, layouts)
        if not done:
            continue
        if ctx.late():
            return found + [_cut(ctx)]
        kind, c = _outcome(ctx, given, ref)
        if kind == "right":
            continue
        if kind == "fault" or len(done) == 1:
            _report(ctx, found, refused, kind, c, given, done)
            continue
        for k, lay in sorted(done, key=lambda d: -inputs[d[0]].numel())[:MAX_ALONE]:  # which one
            if ctx.late():
                return found + [_cut(ctx)]
            alone, one = _relaid(inputs, [k], (lay,))
            kind1, c1 = _outcome(ctx, alone, ref)
            if kind1 != "right":
                _report(ctx, found, refused, kind1, c1, alone, one)
        if kind == "wrong" and not found:  # wrong only with several at once (two tensors read as one)
            _report(ctx, found, refused, kind, c, given, done)
        if len(found) >= MAX_FINDINGS:
            break
    ctx.board.layout_now = None
    if refused and not found:
        what = "; ".join(refused[:3])
        found.append(ctx.finding("P206", f"the launcher raised on {what} (information: it does not take that "
                                         f"layout; a loud error, not a silent wrong result)"[:400], severity=INFO))
    return found[:MAX_FINDINGS + 1]


def _outcome(ctx, given: dict, ref) -> tuple[str, object]:
    """("right" | "wrong" | "raised" | "fault", the Call) of one launch on ``given`` against ``ref``."""
    from harness.probe.detectors.shapes import device_fault

    with ctx.instrument(poison_masked=False):
        c = ctx.call(X.clone_inputs(given), ref=ref)
    if c.error is not None:
        return ("fault" if device_fault(c.error) else "raised"), c
    if c.guard.get("wrote_past_end") or not c.cmp["close"]:
        return "wrong", c
    return "right", c


def _report(ctx, found: list, refused: list, kind: str, c, given: dict, done: list) -> None:
    from harness.errors import error_line
    from harness.probe.context import label

    when = " and ".join(f"'{k}' is {_said(lay, given[k])}" for k, lay in done)
    if kind == "raised":
        refused.append(f"{when.replace(' is ', ' as ')}: {error_line(c.error)}"[:200])
        return
    if kind == "fault":
        what = f"raised {error_line(c.error)}"
    elif past := c.guard.get("wrote_past_end"):
        what = f"wrote outside {', '.join(label(n) for n in past)}"
    else:
        what = wrong(c.cmp)
    found.append(ctx.finding("P206", f"wrong when {when}, at {fmt(ctx.target.sizes)} (right when contiguous, the "
                                     f"same values): {what}"[:400], severity=ERROR, sizes=dict(ctx.target.sizes)))


def _cut(ctx):
    return ctx.finding("P000", f"layout stopped at the end of the probe's budget (--budget "
                               f"{ctx.options.get('budget', 0):g}s): the layouts not yet tried are not checked",
                       severity=INFO)


def partial(ctx) -> list:
    """The budget's end stopped it in a run: the findings so far."""
    found, ctx.board.layout_now = ctx.board.layout_now or [], None
    return list(found)


P206 = Code("P206", ERROR, "wrong when an input that the reference reads is given, with the same values, in another "
                           "layout torch users pass (a row-padded slice of a wider buffer, a transposed view, a "
                           "strided 1-D view): the kernel indexes it as if it were contiguous", ("noncontiguous-input",),
            otherwise="info where the launcher raises on that layout (it refuses it: its domain)")

DETECTOR = Detector("layout", "the default sizes with each input in another memory layout (the same values)", run,
                    process={"interpreter": 1, "gpu": 0}, rank=1, skip=_skip, partial=partial, codes=(P206,))
