"""The launcher's own integer and bool arguments at other values: a correct kernel gives the reference's
result for every value the launcher accepts, and bugs hide in the branches and configs the default value
never takes (a ``causal`` flag's masked path, a ``BLOCK_K`` smaller than a quantization group).

Shape fuzzing varies ``make_inputs``' keywords (the sizes). This one varies only the arguments in the dict
``make_inputs`` returns, and the launcher's keyword defaults it leaves out, that no size decides. A keyword
that no detector varies (``held``: pinned by ``--sizes``, as the board pins an entry author's input switches,
or by an int in ``FUZZ``) is held at its default: a launcher argument it passes on unchanged, shaping no
tensor, is then what a literal in make_inputs' dict would be (a user's file that holds one page size, not a
knob for it), and is varied as one; the keyword itself is never changed, nor any tensor it makes:

- a scalar (a bool or an int) is one only where it is constant in ``make_inputs`` (each of its keywords
  moved by one, a bool flipped, leaves it as it is: a value computed from a size or a switch is theirs) and
  equals no size of the inputs (a dim, a numel, a stride past 1, a ratio of two dims, an integer
  tensor's largest value, sum, last value or largest step: a length, an offset) that stays where it is
  whatever the keywords: varying a size alone gives the kernel inputs that contradict each other, not another valid
  input;
- what a value means is decided by who takes it. Where ``reference`` names the argument (a ``causal``, a
  ``has_bias``, a ``blocksize`` of a quantization), the reference is called with the same value and is the
  answer at every value; where it does not, the argument can only be a config of the computation, and the
  one kind of config whose meaning is sure is a tile: the launcher's value reaches a kernel as a
  ``tl.constexpr`` that shapes a block (``tl.arange``, ``tl.zeros``, a block pointer's ``block_shape``), seen
  in a dry run (the interpreter records each launch's constexprs; no program runs). A tile partitions the
  work: the result must not depend on it beyond the rounding of another order of additions, which the
  error floor (``harness.probe.floor``) covers. One whose value changes the result's shape is part of what
  is computed (a quantization group that sizes the scales), not judged; one that changes only the values
  while the reference hard-codes them (a group the reference does not take) would be called wrong: the
  reference must take such an argument, as it takes every other that changes the answer. Any other
  argument the reference does not take (a flag whose meaning the reference does not know, an enum,
  ``num_warps``) is left alone: the probe cannot tell what it should give;
- an optional tensor: one that ``make_inputs`` gives where the launcher and the reference both default it
  to None is left out of both (the branch without it). The opposite, making up a tensor the file leaves
  None, is not done: no signature says its shape, dtype or values;
- floats are left alone: an ``eps``, a scale, a softcap are values of the computation, not choices of a
  path, and no value beside the default is more telling than another (a softcap's "off" at 0 aside, whose
  "on" has no natural magnitude).

Each argument's values, a handful (``domain``): a bool flipped; 0 and 1 swapped, and 2; a power of two
halved and doubled (a config: tiles stay powers of two), and one either side of it when it is at most 4;
another small int one either side; a larger int halved and one more; a negative int (a sentinel: -1 for
"none") left alone. An int at least as large as the largest value of an integer input (or than the largest
step of a 1-D one: offsets, whose steps are lengths) is not taken below it: it may be their bound (a
segment's most tokens, a number of experts), and the inputs would then contradict it. At the default
sizes, at most ``MAX_RUNS`` launches in all, none that runs more than ``PROGRAMS_FACTOR`` times the
defaults' programs, each stopped at the probe's budget.

Severity, at a value where the default run was right: a result beyond the floor, a write past a tensor,
an access outside memory: an error (which argument, which value, the sizes) where the argument is part of
what is computed (the reference takes it and its answer changes with it: a flag, a page size, a padding)
or an optional tensor left out: a caller of the launcher who passes that value gets it wrong. At another
tile it is a warning: the launch at the user's inputs is right, and a kernel may well not support every
tile (one that must not exceed a quantization group, or cover a head dim in one block); a tuned table, an
autotune list or a caller that picks that tile gets it wrong, which the warning names. A reference that
takes the argument and gives the same answer at the other value ignores it: the argument is a config,
judged as a tile where it shapes a block, left alone where it does not. The launcher or Triton
raising at a value, or the reference raising there: the value is outside their domain, a note. A wrong result
at a value is run once more with the int wrap check of the diagnosis's intwrap experiment: a signed integer of
the kernel that wraps there (an index shifted or multiplied past 32 bits) is named in the finding, the
mechanism the diagnosis then ranks (overflow). A result
of another shape than the default's where ``make_inputs`` made the output buffers (sized for the
default), or a reference with no finite answer at the value: not judged, a note. Under the interpreter
only (a GPU probe runs it on its interpreter side), until it has run on a GPU.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass

from harness.probe import execute as X
from harness.probe.context import budget_stop, fmt, take_kept, wrong
from harness.probe.detectors import Detector
from harness.probe.findings import ERROR, INFO, WARNING, Code

MAX_RUNS = 8  # launches at other values in all (the default run aside)
PROGRAMS_FACTOR = 8  # a value whose launches run more programs than this many times the defaults' is not tried
MAX_FINDINGS = 3
TILE_CALLS = ("arange", "zeros", "full", "ones", "make_block_ptr", "make_tensor_descriptor")  # what shapes a block


@dataclass
class Arg:
    name: str
    value: object  # a bool, an int, or the tensor make_inputs gave (an optional one)
    kind: str  # "branch": the reference takes it; "tile": it does not (judged once a dry run shows a tile);
    # "optional": a tensor both sides default to None, left out
    given: bool = True  # in make_inputs' dict (else the launcher's keyword default)


def is_scalar(v) -> bool:
    return isinstance(v, (bool, int))


def domain(v) -> list:
    """The values tried for a scalar whose default is ``v`` (see the module's docstring)."""
    if isinstance(v, bool):
        return [not v]
    if v < 0:
        return []
    if v in (0, 1):
        vals = [1 - v, 2]
    elif v & (v - 1) == 0:
        vals = [v // 2, v * 2] + ([v - 1, v + 1] if v <= 4 else [])
    elif v <= 8:
        vals = [v - 1, v + 1]
    else:
        vals = [v // 2, v + 1]
    return [x for x in dict.fromkeys(vals) if x != v]


def value_bounds(inputs: dict) -> list[int]:
    """The largest value of each integer tensor of the inputs (bools aside; small tensors only): an int
    argument at least as large may be their bound (a segment's most tokens, a number of experts, a
    vocabulary), and a value below it would contradict them."""
    import torch

    out = []
    for t in inputs.values():
        if (got := _int_values(t)) is not None:
            out += [got["max"]] + ([got["maxdiff"]] if "maxdiff" in got else [])
    return out


def _int_values(t) -> dict | None:
    """What an integer tensor's values say about sizes (None for any other value): its largest value, sum and
    last value, and for a 1-D one its largest step (offsets: the longest segment); small tensors only."""
    import torch

    if not isinstance(t, torch.Tensor) or t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool \
            or not 0 < t.numel() <= 1 << 16:
        return None
    flat = t.detach().reshape(-1).cpu().long()
    got = {"max": int(flat.max()), "sum": int(flat.sum()), "last": int(flat[-1])}
    if t.dim() == 1 and t.numel() > 1:
        got["maxdiff"] = int((flat[1:] - flat[:-1]).max())
    return got


def values_for(arg: "Arg", bounds: list[int]) -> list:
    """``domain`` of the argument's value, less the values below an integer input's largest value that the
    default bounds (``value_bounds``); an optional tensor's one variant: left out."""
    if arg.kind == "optional":
        return [None]
    if isinstance(arg.value, bool):
        return domain(arg.value)
    floor = max((m for m in bounds if 0 < m <= arg.value), default=None)
    return [v for v in domain(arg.value) if floor is None or v >= floor]


def _names(fn) -> tuple[dict, bool]:
    """{name: Parameter} of ``fn``, and whether it takes any keyword (``**kwargs``)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}, True
    return dict(params), any(p.kind == p.VAR_KEYWORD for p in params.values())


def arguments(target, inputs: dict, fixed: set) -> list[Arg]:
    """The launcher's arguments worth other values (``fixed``: those a size or a switch decides)."""
    import torch

    lparams, lany = _names(target.launcher)
    rparams, _ = _names(target.reference)  # a reference's **kwargs names nothing: it decides no meaning
    out = []
    for k, v in inputs.items():
        if not (k in lparams or lany) or k in fixed:
            continue
        if is_scalar(v):
            out.append(Arg(k, v, "branch" if k in rparams else "tile"))
        elif isinstance(v, torch.Tensor) and k in lparams and lparams[k].default is None and k in rparams \
                and rparams[k].default is None:
            out.append(Arg(k, v, "optional"))
    for k, p in lparams.items():  # the launcher's keyword defaults make_inputs leaves as they are
        if k not in inputs and k not in fixed and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) \
                and is_scalar(p.default):
            out.append(Arg(k, p.default, "branch" if k in rparams else "tile", given=False))
    order = {"branch": 0, "optional": 1, "tile": 2}
    return sorted(out, key=lambda a: (order[a.kind], not isinstance(a.value, bool)))


def size_facts(inputs: dict) -> dict:
    """Every size the inputs hold: each tensor's dims, numel, strides past 1, the ratios of two dims (a
    group size, a packing factor), and what an integer tensor's values say (``_int_values``: lengths,
    offsets). A stride of 1 (0) is what every contiguous (expanded) dim has: a scalar of 1 that equals only
    those (a scale, a flag's count) is no size of the inputs."""
    import torch

    facts, dims = {}, []
    for name, t in inputs.items():
        if not isinstance(t, torch.Tensor):
            continue
        facts[("numel", name)] = t.numel()
        for i, (d, s) in enumerate(zip(t.shape, t.stride())):
            facts[("dim", name, i)] = d
            if s > 1:  # a unit (or broadcast) stride is any contiguous (expanded) tensor's, no size of its own
                facts[("stride", name, i)] = s
            dims.append(((name, i), d))
        facts.update({(k, name): v for k, v in (_int_values(t) or {}).items()})
    for a, da in dims:
        for b, db in dims:
            if a != b and db > 0 and da % db == 0 and da // db > 1:
                facts[("ratio", a, b)] = da // db
    return facts


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def _moved(v) -> list:
    """make_inputs' keyword ``v`` moved by one (a bool flipped), the first make_inputs accepts counting."""
    if isinstance(v, bool):
        return [not v]
    if isinstance(v, int):
        return [v + 1] + ([v - 1] if v > 1 else []) + [2 * v]
    return []


def fixed_by_sizes(ctx, inputs: dict) -> set:
    """The launcher's scalars (in ``inputs``, or its keyword defaults) that a keyword of make_inputs or a
    size of the inputs decides (see the module's docstring)."""
    t = ctx.target
    lparams, _ = _names(t.launcher)
    scalars = {k: v for k, v in inputs.items() if is_scalar(v)}
    scalars.update({k: p.default for k, p in lparams.items() if k not in inputs and is_scalar(p.default)})
    facts = size_facts(inputs)
    same_as = {s: {f for f, x in facts.items() if x == v and not isinstance(v, bool)} for s, v in scalars.items()}
    pins = held(ctx)
    out = set()
    for k, v in t.sizes.items():
        for moved in _moved(v) + (_range_ends(t, k, v) if k in pins else []):
            try:
                other = X.make(t, {**t.sizes, k: moved}, ctx.seed, ctx.backend)
            except Exception:  # noqa: BLE001  make_inputs refuses this value: try the next
                continue
            theirs = size_facts(other)
            # a held keyword that shapes no tensor passes its value on as a constant of the user's file
            constant = k in pins and _shapes(other) == _shapes(inputs)
            for s, sv in scalars.items():
                if s in inputs and not _same(other.get(s), sv):
                    if not constant:
                        out.add(s)  # it moved with the keyword: the keyword's
                else:  # it stayed: a size that moved is not it
                    same_as[s] = {f for f in same_as[s] if theirs.get(f) == facts[f]}
            break
        else:  # no other value of this keyword could be made: a scalar equal to it may be it
            out |= {s for s, sv in scalars.items() if is_scalar(v) and _same(sv, v)}
    return out | {s for s, fs in same_as.items() if fs}


def held(ctx) -> set:
    """make_inputs' keywords that no detector varies as a size: pinned by ``--sizes`` (the board pins an entry
    author's input switches so) or by an int in ``FUZZ``. Shape fuzzing keeps them at their defaults; a launcher
    argument that such a keyword passes on unchanged, shaping no tensor (a page size, a flag), is then to the probe
    what a literal in make_inputs' dict is, and this detector varies it as one (the module's docstring)."""
    from harness.probe import fuzz
    from harness.probe.context import pinned_names

    t = ctx.target
    return pinned_names(ctx) | set(fuzz.pinned(t.sizes, getattr(t, "ranges", None) or {}))


def _range_ends(target, k: str, v) -> list:
    """The ends of ``FUZZ``'s range of keyword ``k`` other than its default ``v`` (values make_inputs is declared
    to take, where moving it by one is refused: a page size of 32 or 64)."""
    from harness.probe import fuzz

    lo, hi = fuzz.size_range(getattr(target, "ranges", None) or {}, k)
    return [x for x in (lo, hi) if isinstance(x, int) and not isinstance(x, bool) and x != v]


def _shapes(inputs: dict) -> dict:
    """Each tensor input's shape."""
    import torch

    return {k: tuple(v.shape) for k, v in inputs.items() if isinstance(v, torch.Tensor)}


def tile_names(kernels) -> set:
    """The names that shape a block in the kernels' source (``TILE_CALLS``' arguments)."""
    from harness.probe.kernels import kernel_source

    out = set()
    for k in kernels:
        try:
            tree = ast.parse(textwrap.dedent(kernel_source(k)))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if called in TILE_CALLS:
                    parts = node.args[1:] if called == "arange" else node.args[:1] if called != \
                        "make_block_ptr" else []
                    parts += [kw.value for kw in node.keywords if kw.arg in ("block_shape", "shape", "end")]
                    out |= {n.id for p in parts for n in ast.walk(p) if isinstance(n, ast.Name)}
    return out


def with_value(inputs: dict, arg: Arg, v) -> dict:
    out = dict(inputs)
    if arg.kind == "optional":
        del out[arg.name]
    else:
        out[arg.name] = v
    return out


def _said(arg: Arg, v) -> str:
    if arg.kind == "optional":
        return f"'{arg.name}' left out (None, the launcher's and the reference's default)"
    src = "make_inputs gives" if arg.given else "the launcher's default is"
    return f"{arg.name}={v!r} ({src} {arg.value!r})"


def _dry(ctx, given: dict) -> tuple[dict, int | None, BaseException | None]:
    """(the constexprs each launch was given: name -> powers of two, the programs, what it raised) of
    a launch at ``given`` with no program run."""
    from harness.run.worker import call_with

    with ctx.instrument(dry_run=True) as rec:
        try:
            call_with(ctx.target.launcher, X.clone_inputs(given))
        except Exception as e:  # noqa: BLE001  the launcher's domain, or a dry run's garbage: the real run says
            return dict(rec.blocks), None, e
    return {k: tuple(v) for k, v in rec.blocks.items()}, sum(rec.programs.values()) or None, None


def _outcome(ctx, given: dict, ref) -> tuple[str, object, dict]:
    """("right" | "wrong" | "raised" | "fault", the Call, memcheck's accesses outside) of one launch on
    ``given`` against ``ref``, as today's GPUs run it (0 in masked lanes), bounds-checked."""
    from harness.probe.context import device_fault

    with ctx.instrument(poison_masked=False, memcheck=True) as rec:
        c = ctx.call(X.clone_inputs(given), ref=ref)
    oob = dict(rec.oob) if rec is not None else {}
    if c.error is not None:
        return ("fault" if device_fault(c.error) else "raised"), c, oob
    if c.guard.get("wrote_past_end") or not c.cmp["close"] or oob:
        return "wrong", c, oob
    return "right", c, oob


def _skip(ctx) -> str | None:
    """Why nothing is to be varied (make_inputs fails at the defaults: the reference detector says so)."""
    t = ctx.target
    try:
        inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    except Exception:  # noqa: BLE001
        return "make_inputs raised at the default sizes"
    if not arguments(t, inputs, set()):
        return "no integer or bool argument of the launcher, and no optional tensor, to vary"
    if not arguments(t, inputs, fixed_by_sizes(ctx, inputs)):
        return "every integer or bool argument of the launcher is a size or one of make_inputs' switches"
    return None


def run(ctx) -> list:
    ctx.budget.begin_share()  # a share of what is left: fuzzing and the diagnosis come after (budget.VARY_SHARE)
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    args = arguments(t, inputs, fixed_by_sizes(ctx, inputs))
    ref = X.reference(t, inputs)
    kind, base, base_oob = _outcome(ctx, inputs, ref)
    if kind != "right" or not args:
        return []  # wrong (or raised) at the defaults already: the reference detector's finding
    from harness.probe.kernels import jitted

    blocks, programs, _ = _dry(ctx, inputs)
    st = {"found": [], "refused": [], "unjudged": [], "runs": 0, "tiles": tile_names(jitted(t)),
          "blocks": blocks, "programs": programs, "oob": set(base_oob), "shape": tuple(base.ref.shape),
          "bounds": value_bounds(inputs)}
    ctx.board.scalars_now = st["found"]  # what the budget's end keeps (partial)
    cut = False
    for arg in args:
        for v in values_for(arg, st["bounds"]):
            if st["runs"] >= MAX_RUNS:
                break
            if cut := ctx.late():
                break
            if not _try(ctx, st, inputs, ref, arg, v):
                break  # not a tile: its other values neither
        if cut:
            break
    ctx.board.scalars_now = None
    found = st["found"][:MAX_FINDINGS]
    if not found and (st["refused"] or st["unjudged"]):
        said = "; ".join((st["refused"] + st["unjudged"])[:3])
        found.append(ctx.finding("P208", f"at {fmt(t.sizes)}: {said} (information: values outside the launcher's "
                                         f"or the reference's domain, a loud error, not a silent wrong result)"[:500],
                                 severity=INFO))
    return found + ([budget_stop(ctx, "the values not yet tried")] if cut else [])


def _try(ctx, st: dict, inputs: dict, ref, arg: Arg, v) -> bool:
    """One value of one argument, judged into ``st``; False where the argument turns out not to be a tile
    (a config the reference does not take whose meaning the probe cannot tell: none of its values is tried)."""
    from harness.errors import error_line

    given = with_value(inputs, arg, v)
    blocks, programs, raised = _dry(ctx, given)
    if arg.kind == "tile":
        if raised is not None:  # refused at this value (or a dry run's garbage): whether a tile, the next says
            return True
        if not _moved_tiles(blocks, st):
            return False
    if programs and st["programs"] and programs > PROGRAMS_FACTOR * st["programs"]:
        return True  # too long a run under the interpreter (a tile made tiny): the next value
    said = _said(arg, v)
    if arg.kind != "tile":
        try:
            at_v = X.reference(ctx.target, given)
        except Exception as e:  # noqa: BLE001  the reference's domain
            st["refused"].append(f"the reference raised with {said}: {error_line(e)}"[:200])
            return True
        if arg.kind == "branch" and _same_answer(at_v, ref):
            # the reference takes it and ignores it: not a branch of what is computed but a config, judged as
            # one (a tile), and left alone where it shapes no block
            arg.kind = "tile"
            if raised is None and not _moved_tiles(blocks, st):
                return False
        ref = at_v
    st["runs"] += 1
    kind, c, oob = _outcome(ctx, given, ref)
    if kind == "right":
        return True
    if kind == "raised":
        st["refused"].append(f"the launcher raised with {said}: {error_line(c.error)}"[:200])
        return True
    new_oob = {k: h for k, h in oob.items() if k not in st["oob"]}
    if kind == "wrong" and not new_oob and not c.guard.get("wrote_past_end") and (why := _unjudged(c, st, arg)):
        st["unjudged"].append(f"with {said} {why}")
        return True
    wraps = _wraps(ctx, given) if kind == "wrong" else ""
    st["found"].append(_wrong_finding(ctx, arg, said, kind, c, new_oob, blocks, st, wraps))
    return True


def _wraps(ctx, given: dict) -> str:
    """"; a signed integer wraps at LINE (WHAT)" where the launch at ``given``, made once more with the int wrap
    check (the diagnosis's intwrap experiment's: each signed add, subtract and multiply of 32 bits or fewer in the
    kernel's lines against the same in 64 bits), sees one wrap, else "": an index, offset or counter past its
    type at that value is the mechanism (``diagnosis.INT_WRAPS``: evidence "debug-assert")."""
    from harness.probe.diagnosis import INT_WRAPS
    from harness.probe.wraps import first_wrap

    try:
        wrap = first_wrap(ctx, X.clone_inputs(given))
    except Exception:  # noqa: BLE001  the value's own run said what it does; this one only looks for a wrap
        return ""
    if wrap is None:
        return ""
    line, what = wrap
    return f"; {INT_WRAPS} {line} ({what})"


def _moved_tiles(blocks: dict, st: dict) -> set:
    """The kernels' tile names (``st["tiles"]``) whose constexpr values differ between a dry run's ``blocks`` and
    the default's."""
    return {n for n in set(blocks) | set(st["blocks"]) if blocks.get(n) != st["blocks"].get(n)} & st["tiles"]


def _same_answer(a, b) -> bool:
    """Whether two results of the reference are the same (shapes and values, NaN where NaN)."""
    import torch

    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and bool(torch.equal(a, b) or (
            a.is_floating_point() and torch.isclose(a, b, rtol=0, atol=0, equal_nan=True).all()))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same_answer(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_answer(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _unjudged(c, st: dict, arg: Arg | None = None) -> str:
    """Why a result that differs from the reference at another value says nothing about the kernel, or "": the
    reference's result has another shape than the default's where make_inputs sized the outputs for the default;
    a tile's result has another shape than the reference's (the block size is then part of what is computed, a
    group of a quantization, not a partition of the work); the reference itself is not finite there."""
    import torch

    if arg is not None and arg.kind == "tile" and c.out is not None and tuple(c.out.shape) != tuple(c.ref.shape):
        return (f"the result has shape {tuple(c.out.shape)}, the reference's {tuple(c.ref.shape)}: not judged (a "
                f"block size that shapes the result is part of what is computed, not a tile)")
    if tuple(c.ref.shape) != st["shape"] and c.out is not None and tuple(c.out.shape) != tuple(c.ref.shape):
        return (f"the reference's result has shape {tuple(c.ref.shape)}, the default's {st['shape']}: not judged "
                f"(make_inputs sized the outputs for the default)")
    if c.ref.is_floating_point() and not bool(torch.isfinite(c.ref).all()):
        return "the reference's result is not finite: not judged (it has no answer there)"
    return ""


def _wrong_finding(ctx, arg: Arg, said: str, kind: str, c, oob: dict, blocks: dict, st: dict, wraps: str = ""):
    from harness.errors import error_line
    from harness.probe.context import label

    if kind == "fault":
        what = f"raised {error_line(c.error)}"
    elif past := c.guard.get("wrote_past_end"):
        what = f"wrote outside {', '.join(label(n) for n in past)}"
    elif oob:
        (acc, tensor, side, line), hit = next(iter(oob.items()))
        what = f"{hit['kernel']}: {acc} {side} of '{tensor}' at {line}" + ("" if c.cmp.get("close") else
                                                                             f"; {wrong(c.cmp)}")
    else:
        what = wrong(c.cmp) + kept_fill(c, ctx.target.sizes)
    what += wraps
    if arg.kind == "tile":
        names = sorted(_moved_tiles(blocks, st))
        why = (f"a tile of the kernel ({', '.join(names)}), which the reference does not take or ignores: the "
               f"result must not depend on it, unless the kernel does not support that tile. A warning: the launch "
               f"at your inputs is right; wrong only where a config (a tuned table, an autotune list, a caller) "
               f"picks this tile; if the kernel does not support it, have the launcher refuse it")
    elif arg.kind == "optional":
        why = "the branch without it; the reference takes the same"
    else:
        why = "the reference takes it and was given the same value"
    return ctx.finding("P208", f"wrong with {said} at {fmt(ctx.target.sizes)} (right at the default): {what} "
                               f"({why})"[:700], severity=WARNING if arg.kind == "tile" else ERROR,
                       sizes=dict(ctx.target.sizes),
                       defect="autotune-config-reuse" if arg.kind == "tile" else "")


def kept_fill(c, sizes: dict) -> str:
    """"; the N wrong elements all hold -1 ...: never written, they keep what the output was filled with" where
    the wrong elements of the run ``c`` all hold one fill value where the reference varies (``fill_kept``: the
    diagnosis reads it as an unwritten output), else ""."""
    import torch

    from harness.probe.context import fill_kept

    if c.out is None or tuple(c.out.shape) != tuple(c.ref.shape):
        return ""
    out, ref = c.out.reshape(-1).double(), c.ref.reshape(-1).double()
    wrong_ = ~torch.isclose(out, ref, rtol=1e-3, atol=1e-6, equal_nan=True)
    got = fill_kept(out, ref, wrong_, sizes)
    return f"; {got['fill-kept']}" if got else ""


def partial(ctx) -> list:
    """The budget's end stopped it in a run: the findings so far."""
    return take_kept(ctx, "scalars_now")


P208 = Code("P208", ERROR, "wrong at another value of the launcher's own integer or bool argument (a flag the "
                           "reference takes, a tile the result must not depend on, an optional tensor left out), "
                           "at the default sizes, where the default value is right", ("autotune-key-missing-shape",),
            otherwise="a warning where the argument is a tile (the reference does not take it, or its answer does "
                      "not change with it): the launch at the user's inputs is right, and the kernel may not support "
                      "that tile; info where the launcher, Triton or the reference raises at that value (its "
                      "domain), or the result's shape changes where make_inputs sized the outputs")

# The interpreter's side only, for now: it has not been run on a GPU yet (the dry run that tells a tile is the
# instrumented interpreter's). A probe on a GPU machine runs both backends at once (gpu+interpreter), so its
# interpreter side still varies the arguments.
DETECTOR = Detector("scalars", "the launcher's own integer and bool arguments at other values (flags, tiles)", run,
                    backends=("interpreter",),
                    process={"interpreter": 1}, rank=4, skip=_skip, partial=partial, codes=(P208,))
