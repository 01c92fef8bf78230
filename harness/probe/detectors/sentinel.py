"""The contract's sentinel in integer index inputs: a correct kernel skips what its reference skips.

Kernels that take integer tensors of indices often give one value the meaning "skip this": a
cross-entropy's ``ignore_index`` (torch's -100) for padded or masked labels, -1 in a slot mapping or a
block table for padding, -1 for an expert id of a dropped token. Bugs live there (a mean that divides by
every token, the ignored ones included; a gather through the -1; a store to slot -1), and a user's
``make_inputs`` usually fills such a tensor with valid ids only, so no other detector puts the value in
(``special`` varies floats alone; ``scalars`` leaves negative ints alone). This detector does, at the
default sizes, where the contract names the value, and judges the kernel against the float64
reference of those very inputs.

When a value is the contract's sentinel, shown, not guessed. Putting -1 into an index tensor whose contract
does not name it gives the kernel an input outside its domain (a kernel reading through an undeclared -1 is
not wrong), so both of these must hold:

- the file names the value: a parameter of the launcher or of the reference holds a negative integer (its
  keyword default, or the value ``make_inputs`` gives it: ``ignore_index=-100``, ``pad_id=-1``), or the file
  spells out ``ignore_index=`` in a call (torch's ``cross_entropy`` and ``nll_loss`` take it; a torch loss
  called without it is not taken as naming its default -100: the user did not ask for it);
- the reference treats that value of that input as special, seen while it runs on the default inputs
  (a ``TorchFunctionMode`` watches its torch calls, as ``special.meets_nan`` does): it passes the input (or a
  view, reshape, cast or slice of it: the same values) as the target of ``cross_entropy`` or ``nll_loss`` with
  ``ignore_index`` at the value, or compares it for equality (``==``, ``!=``, ``eq``, ``ne``) with a negative
  value a parameter names. A comparison with a value no parameter names, or an order comparison (``>= 0``),
  is not taken: nothing says which negative value a user's tensor holds. Then the reference, called on
  inputs that hold the value, must give a defined answer: where it raises, the value is outside its domain
  (a note), where its result is not finite there (the mean of a batch with every token ignored, 0/0) the
  kernel's value is not judged (a note).

Which tensors: the inputs the reference reads whose dtype is an integer one that holds the value (not bool,
not an unsigned type for a negative value) and whose values at the defaults are those of an index (none
negative but the sentinel itself). Where: the same way for any kernel, two runs per (input, sentinel):

- scattered: every fourth element (flat index 1, 5, 9, ...) and the last one. A skip that is counted moves a
  mean by a quarter or more (a sum over n against one over 3n/4), far beyond any tolerance; the elements
  spread over every row, program and block of a tiled loop, and the last one is at the end of the last block;
- a whole row: the first last-dim row of a matrix (all of a vector): a sequence with every label ignored, a
  request with every slot padded. A mean over that row is 0/0; a reference that guards it (a count clamped to
  1, a ``where``) must be matched, and a reference that has no finite answer is not judged.

The value stands for "skip this element" wherever it is: that is what a loss's ``ignore_index`` means, and what a
reference that compares each element with it computes. A contract in which other inputs restrict where it may
stand (a block table's -1 only past its sequence's length) says so by a reference that refuses it elsewhere (it
raises: a note); a reference that skips it anywhere is the answer anywhere.

At most ``MAX_RUNS`` launches, in a share of the budget (``Budget.begin_share``), each stopped at the probe's
budget. Judged as every detector judges, by the output dtype's tolerance and the error floor
(``execute.call``, ``harness.probe.floor``), with memcheck on:

- an access outside a tensor (a gather through the sentinel: memcheck's load before the start; a store to
  slot -1), a write past a tensor, a device fault: an error (out-of-bounds-read or -write);
- NaN or Inf where the float64 reference is finite: an error (with the whole row: the 0/0 of a mean over
  nothing, which the reference guards: degenerate-size); finite values beyond the floor: an error (what is
  counted or skipped is not what the reference counts: wrong-formula);
- the launcher raising at the value: a note (its domain, a loud refusal); the reference raising: a note.

Only where the default run is right (else the reference detector's finding is the one). Under the
interpreter only: on a GPU, a gather through -100 is an illegal address that ends the CUDA context and every
later run of its process (the GPU probe's other detectors); the interpreter's memcheck sees the same access
without a fault, and a probe on a GPU machine runs its interpreter side too.
"""

from __future__ import annotations

import ast
import inspect

from harness.probe import execute as X
from harness.probe.context import budget_stop, fmt, wrong
from harness.probe.detectors import Detector, kept_so_far, no_inputs_to_vary
from harness.probe.findings import ERROR, INFO, Code

MAX_RUNS = 4  # launches with a sentinel in all: two inputs or two sentinels, each scattered and as a row
SCATTER_EVERY = 4  # every fourth element, from index 1 (and the last)
LOSSES = {"cross_entropy": 1, "nll_loss": 1}  # torch losses taking ignore_index -> the position of their target
SAME_VALUES = frozenset((  # ops whose result holds the same values as their tensor argument (or a part of them)
    "reshape", "view", "flatten", "ravel", "long", "int", "short", "to", "type", "contiguous", "clone", "detach",
    "cpu", "cuda", "__getitem__", "squeeze", "unsqueeze", "expand", "expand_as", "permute", "transpose", "t",
    "narrow", "select", "view_as", "reshape_as", "unflatten", "split", "chunk", "unbind", "movedim"))
EQUALITY = frozenset(("eq", "ne", "__eq__", "__ne__"))
# variant -> how the value is put in, in words (each finding's ``defect`` says what it showed: the diagnosis reads it)
VARIANTS = {"scattered": "scattered", "row": "as a whole row"}


def named_values(target, inputs: dict) -> dict:
    """{(who, parameter): value} of the launcher's and the reference's parameters that hold a negative integer,
    as ``make_inputs`` gives them or as their keyword default (a bool is not an integer here)."""
    out = {}
    for who, fn in (("launcher", target.launcher), ("reference", target.reference)):
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        for k, p in params.items():
            v = inputs[k] if k in inputs else p.default
            if isinstance(v, int) and not isinstance(v, bool) and v < 0:
                out[(who, k)] = v
    return out


def writes_ignore_index(target) -> bool:
    """Whether the user's file (the reference's module, or the launcher's) passes ``ignore_index=`` to a call."""
    for mod in {id(m): m for m in (inspect.getmodule(target.reference), inspect.getmodule(target.launcher))
                if m is not None}.values():
        try:
            tree = ast.parse(inspect.getsource(mod))
        except (OSError, TypeError, SyntaxError):
            continue
        if any(isinstance(n, ast.Call) and any(kw.arg == "ignore_index" for kw in n.keywords) for n in ast.walk(tree)):
            return True
    return False


def index_inputs(target, inputs: dict) -> list:
    """The integer tensor inputs the reference reads (bools aside, some elements)."""
    import torch

    read, _ = X.reads(target, inputs)
    return [k for k, v in inputs.items() if k in read and isinstance(v, torch.Tensor) and v.numel()
            and not v.dtype.is_floating_point and not v.dtype.is_complex and v.dtype != torch.bool]


def holds(t, value: int) -> bool:
    """Whether ``t`` is an index tensor that can take ``value`` as its sentinel: its dtype holds the value, and
    no element is negative but the value itself (labels in [0, V), slots, ids)."""
    import torch

    info = torch.iinfo(t.dtype)
    if not info.min <= value <= info.max:
        return False
    flat = t.detach().reshape(-1).cpu().long()
    return not bool(((flat < 0) & (flat != value)).any())


def watched(target, inputs: dict, names: list, named: dict, loss_kw: bool) -> list:
    """(input, sentinel, why) for each integer input the reference, run on ``inputs`` (a copy), treats the value
    of as special (the module's docstring): the target of a torch loss with ``ignore_index`` (where the file
    writes it), or an equality comparison with a negative value a parameter names. Empty where it raises."""
    import torch
    from torch.overrides import TorchFunctionMode

    from harness.run.worker import call_with

    given = X.clone_inputs(inputs)
    tags = {id(given[k]): (given[k], frozenset([k])) for k in names}  # tensor id -> (kept alive, its inputs)
    by_value = {}
    for (who, p), v in named.items():
        by_value.setdefault(v, f"the {who}'s parameter '{p}'")
    seen: dict = {}

    def tag_of(x) -> frozenset:
        got = tags.get(id(x)) if isinstance(x, torch.Tensor) else None
        return got[1] if got is not None and got[0] is x else frozenset()

    def tag(x, src) -> None:
        if isinstance(x, torch.Tensor):
            tags[id(x)] = (x, src)
        elif type(x) in (tuple, list):
            for y in x:
                tag(y, src)

    def note(src, value, why) -> None:
        if len(src) == 1 and isinstance(value, int) and not isinstance(value, bool):
            seen.setdefault((next(iter(src)), value), why)

    class Watch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            name = getattr(func, "__name__", "")
            if name in SAME_VALUES and args and (src := tag_of(args[0])):
                tag(out, src)
            elif name in EQUALITY and len(args) == 2 and (src := tag_of(args[0])) and args[1] in by_value \
                    and not args[0].dtype.is_floating_point:
                note(src, args[1], f"the reference compares it with {args[1]}, the value of {by_value[args[1]]}")
            elif name in LOSSES and loss_kw and "ignore_index" in kwargs:
                tgt = args[LOSSES[name]] if len(args) > LOSSES[name] else kwargs.get("target")
                if src := tag_of(tgt):
                    note(src, kwargs["ignore_index"], f"the reference gives it to torch's {name} with "
                                                      f"ignore_index={kwargs['ignore_index']}")
            return out

    try:
        with Watch():
            call_with(target.reference, given)
    except Exception:  # noqa: BLE001  it raises on the defaults: the reference detector says so
        return []
    return [(k, v, why) for (k, v), why in seen.items()]


def sentinels(target, inputs: dict) -> tuple[list, str]:
    """(input, sentinel, why) of each sentinel the contract names for an index input the reference reads (the
    module's docstring), and why there are none ("" where there are)."""
    names = index_inputs(target, inputs)
    if not names:
        return [], "no integer tensor input that the reference reads: no index to put a sentinel into"
    named, loss_kw = named_values(target, inputs), writes_ignore_index(target)
    if not named and not loss_kw:
        return [], ("the contract names no sentinel: no parameter of the launcher or the reference holds a negative "
                    "integer, and the file passes no ignore_index= to a call")
    found = [(k, v, why) for k, v, why in watched(target, inputs, names, named, loss_kw) if holds(inputs[k], v)]
    if not found:
        return [], ("the reference treats no value of an integer input as a sentinel (no torch loss given it with "
                    "ignore_index=, no equality with a negative value a parameter names), or its values are not "
                    "an index's")
    return found, ""


def plan(found: list) -> list:
    """(input, sentinel, why, variant) of each run, the scattered ones first (a budget's end cuts the last)."""
    return ([(k, v, why, "scattered") for k, v, why in found] + [(k, v, why, "row") for k, v, why in found])[:MAX_RUNS]


def place(inputs: dict, name: str, value: int, variant: str) -> str:
    """Put ``value`` into ``inputs[name]`` (a copy: changed in place, its layout kept); where, in words."""
    t = inputs[name]
    flat = t.reshape(-1).clone()
    n = flat.numel()
    if variant == "row":
        row = t.shape[-1] if t.dim() >= 2 else n
        flat[:row] = value
        where = f"{name}[{'0, ' * (t.dim() - 1)}:]" if t.dim() >= 2 else f"all of '{name}'"
    else:
        flat[1::SCATTER_EVERY] = value
        flat[-1] = value
        where = (f"{int((flat == value).sum())} of the {n} elements of '{name}' (every {SCATTER_EVERY}th from 1, "
                 f"the last)")
    t.copy_(flat.reshape(t.shape))
    return where


def _skip(ctx) -> str | None:
    why = {}

    def found(target, inputs) -> list:
        got, why["none"] = sentinels(target, inputs)
        return got

    said = no_inputs_to_vary(ctx, found, "")  # make_inputs raising at the defaults says so
    return why.get("none") or said or None


def _launch(ctx, given: dict, ref):
    """One launch on ``given`` against ``ref``, with 0 in masked lanes (today's GPUs) and memcheck on: the Call and
    memcheck's accesses outside ({(access, tensor, side, line): hit})."""
    with ctx.instrument(poison_masked=False, memcheck=True) as rec:
        c = ctx.call(X.clone_inputs(given), ref=ref)
    return c, dict(rec.oob) if rec is not None else {}


def run(ctx) -> list:
    ctx.budget.begin_share()  # a share of what is left: fuzzing and the diagnosis come after (budget.VARY_SHARE)
    from harness.errors import error_line

    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    found_sentinels, _ = sentinels(t, inputs)
    if not found_sentinels:
        return []
    ref = X.reference(t, inputs)
    base, base_oob = _launch(ctx, inputs, ref)
    if base.error is not None or not base.cmp.get("close") or base.guard.get("wrote_past_end"):
        return []  # wrong (or raised) at the defaults already: the reference detector's finding
    found, notes = [], []
    ctx.board.sentinel_now = found  # what the budget's end keeps (partial)
    cut = False
    for name, value, why, variant in plan(found_sentinels):
        if cut := ctx.late():
            break
        given = X.clone_inputs(inputs)
        where = place(given, name, value, variant)
        said = f"with the sentinel {value} {VARIANTS[variant]} in {where} at {fmt(t.sizes)} ({why})"
        try:
            r = X.reference(t, given)
        except Exception as e:  # noqa: BLE001  the reference's domain
            notes.append(f"the reference raised with the sentinel {value} {VARIANTS[variant]} in '{name}': "
                         f"{error_line(e)}")
            continue
        c, oob = _launch(ctx, given, r)
        got = judge(ctx, c, {k: h for k, h in oob.items() if k not in base_oob}, variant, said)
        if isinstance(got, str):
            notes.append(got)
        elif got is not None:
            found.append(got)
    ctx.board.sentinel_now = None
    out = found[:2]
    if notes and not out:
        out.append(ctx.finding("P209", f"information: {'; '.join(notes[:2])}"[:500], severity=INFO))
    return out + ([budget_stop(ctx, "the sentinel runs not yet made")] if cut else [])


def judge(ctx, c, oob: dict, variant: str, said: str):
    """The finding of one run with the sentinel (``said``), a note's text, or None (right)."""
    import torch

    from harness.errors import error_line
    from harness.probe.context import device_fault, label

    sizes = dict(ctx.target.sizes)
    if c.error is not None:
        if device_fault(c.error):
            return ctx.finding("P209", f"{said}: the launch raised {error_line(c.error)} (an access outside "
                                       f"memory)"[:500], severity=ERROR, sizes=sizes, defect="out-of-bounds-read")
        return f"the launcher raised {said}: {error_line(c.error)}"[:300]
    if past := c.guard.get("wrote_past_end"):
        return ctx.finding("P209", f"{said}: wrote outside {', '.join(label(n) for n in past)}"[:500],
                           severity=ERROR, sizes=sizes, defect="out-of-bounds-write")
    if oob:
        (acc, tensor, side, line), hit = next(iter(oob.items()))
        store = acc != "load"
        what = f"{hit['kernel']}: {acc} {side} of '{tensor}' at {line}" + \
            ("" if c.cmp.get("close") else f"; {wrong(c.cmp)}")
        return ctx.finding("P209", f"{said}: {what}"[:500], severity=ERROR, sizes=sizes,
                           defect="out-of-bounds-write" if store else "out-of-bounds-read")
    if c.cmp.get("close") or c.out is None or c.out.numel() != c.ref.numel():
        return None  # right, or a structure the reference detector reports
    o, r = c.out.reshape(-1).double(), c.ref.reshape(-1).double()
    unanswered = int((~torch.isfinite(r) & ~((o == r) | (torch.isnan(o) & torch.isnan(r)))).sum())
    if unanswered and unanswered >= c.cmp.get("n_bad", 0):  # every element off is where the reference is not finite
        return (f"{said} the kernel differs only where the reference is not finite (NaN or Inf at {unanswered} of "
                f"{r.numel()} result elements: a mean over nothing, 0/0): not judged")[:300]
    if c.cmp.get("nonfinite"):
        what = f"{c.cmp['nonfinite']} result elements NaN/Inf where the float64 reference is finite: {wrong(c.cmp)}"
        defect = "degenerate-size" if variant == "row" else "wrong-formula"
    else:
        what = f"off by more than the tolerance and the error floor: {wrong(c.cmp)}"
        defect = "wrong-formula"
    return ctx.finding("P209", f"{said}: {what} (right without it)"[:500], severity=ERROR, sizes=sizes, defect=defect)


def partial(ctx) -> list:
    """The budget's end stopped it in a run: the findings so far."""
    return kept_so_far(ctx, "sentinel_now")


P209 = Code("P209", ERROR, "wrong with the sentinel the contract names (a loss's ignore_index, a negative value a "
                           "parameter names and the reference compares an index input with) put into that integer "
                           "input, scattered or as a whole row, at the default sizes where the plain run is right: "
                           "an access outside memory through it, NaN/Inf where the float64 reference is finite, or "
                           "values beyond the error floor (a skipped element counted)",
            ("c-style-division-negative",),
            otherwise="info where the launcher or the reference raises with the sentinel (its domain), or the "
                      "reference has no finite answer where the kernel differs (a mean over nothing)")

# The interpreter's side only (the module's docstring says why): a probe on a GPU machine runs both backends at
# once (gpu+interpreter), so its interpreter side puts the sentinel in.
DETECTOR = Detector("sentinel", "the default sizes with the contract's sentinel (ignore_index, -1) in integer index "
                                "inputs", run, backends=("interpreter",), process={"interpreter": 1}, rank=5,
                    skip=_skip, partial=partial, codes=(P209,))
