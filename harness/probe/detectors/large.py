"""Sizes past 2**31 elements on the GPU (int32 offsets): run by the probe itself where the launched
kernels show an int32 offset that grows with a size, and always with ``--large``.

An int32 offset (``pid * BLOCK``, ``row * stride``) wraps once a tensor holds more than 2**31
elements (or bytes, where a kernel computes byte offsets); no size the interpreter can run gets
there, and a GPU has the memory for it. No user knows to ask for that run, so the probe decides
from evidence about the kernel (``harness.probe.int32_offsets``: lint's TL501 on the source of the
kernels the launcher launched, at their lines; its docstring says why that evidence is enough):

- with the evidence, on a GPU, the run below is made at the defaults, inside the probe's budget: it
  takes at most ``budget.LARGE_SHARE`` of what the budget has left when it begins, and a pilot run
  at 1/``PILOT`` of the planned size, timed, says whether the whole run fits that slice (what its first
  call takes once, compiling the new specialization, told apart and not scaled: ``_once_cost``). Where it does
  not (or no size fits the GPU's memory), the P406 note names the hazard and a P000 note says the
  run was not made and why; never a silent skip;
- with the evidence and no GPU (the interpreter), the P406 note at the offsets' lines: a hazard
  ("int32 offset grows with <size>; wraps once <tensor> passes 2**31 elements"), neither an error,
  since nothing was shown wrong, nor a warning: a program id times a runtime stride in int32 is in
  about half the correct kernels of the casebook and of the benchmark's dev half (20 of 39 case
  kernels, 10 of 22 dev fixed versions: docs/measurements/auto-large/), each wrong only for a tensor
  past 2**31 elements that many of their users never build; a warning there would be noise that
  ``--strict`` fails on. The evidence's worth is the GPU run it buys; lint's TL501 (preview) is the
  rule for whoever wants every such offset flagged;
- without it, nothing runs (a kernel that widens its offsets to int64 stays quiet); ``--large`` runs
  it anyway, outside the budget (its own time, as before).

The run scales ONE size at a time, the one that grows the largest tensor fastest (the kernels'
own tensor arguments counted: a buffer the launcher makes for the kernel is often the largest),
until that tensor passes 2**31 elements (a second try: 2**31 bytes, where that takes a larger
size), as long as every tensor fits in the GPU's free memory with 20% of it kept free (``plan``, a
pure function, decides). It then runs the launcher once on plain inputs (no guard bands: they would
double the memory) and checks what it can:

- a crash or an illegal address: P404;
- the values of SAMPLED result rows (the first rows, the last rows, and the rows around the
  2**31 boundary) against the reference, when the reference's float64 copy of the problem
  fits in memory; else, when the launcher works row-wise (the scaled size is every tensor's
  first dimension), against a second run of the same kernel on those rows alone, a problem
  small enough for int32 offsets, and the reference on those rows;
- otherwise only the crash.
"""

from __future__ import annotations

import contextlib
import math

from harness.probe.budget import LARGE_HOLD_MARGIN_S, LARGE_HOLD_MAX_S, LARGE_HOLD_S, LARGE_SHARE
from harness.probe.context import Context, fmt as _fmt, int_sizes
from harness.probe.detectors import Detector
from harness.probe.findings import ERROR, INFO, Code
from harness.run.gpu_random import drawn_on, made_on

LIMIT = 2 ** 31
KEEP_FREE = 0.2  # of the GPU's free memory
SAMPLE_ROWS = 64  # rows compared at each place
HOST_FRACTION = 0.5  # of the host's memory the float64 reference may use
MARGIN = 1.01  # past 2**31 by 1%: whole rows past it (``row * stride`` wraps only there), not one element
REFUSED = "refused"  # run_at's answer when the kernel will not build at the planned sizes (a limit, not a bug)
PILOT = 16  # the pilot run, timed before the run the probe decides on, is at 1/PILOT of the planned tensors


def plan(sizes: dict, tensors: list[dict], free_bytes: int, by: str = "elements", targets=()) -> dict | None:
    """The first of ``plans``: the one with the fewest bytes in all, the earlier size on a tie (1%)."""
    found = plans(sizes, tensors, free_bytes, by, targets)
    return found[0] if found else None


def plans(sizes: dict, tensors: list[dict], free_bytes: int, by: str = "elements", targets=()) -> list[dict]:
    """Each size's plan that fits, fewest bytes first (a size the kernel refuses to scale that far,
    a block of 2**29 columns say, leaves the next one to try). A plan scales one size until the
    largest tensor passes 2**31 elements by ``MARGIN`` (``by="bytes"``: bytes): {"sizes", "key",
    "tensor", "numel", "bytes", "total_bytes"}; none for a size that grows no tensor or whose
    tensors would not fit in ``(1 - KEEP_FREE) * free_bytes``.

    ``tensors``: for each input and output at ``sizes``: {"name", "numel", "itemsize", "growth":
    {size: exponent}} where numel grows as (size / default) ** exponent (1 for a dimension, 2 for
    a square matrix of one size; measured by ``growth``); ``"counted": False`` for a kernel's argument that is
    one of the inputs again (its bytes are the input's: counted once).

    ``targets``: the names of the tensors the int32 offsets address (the evidence's pointers,
    "kernel:argument"). An offset wraps when the tensor it addresses passes 2**31 elements, not when some
    other tensor does: a size that grows another tensor past 2**31 more cheaply (a per-expert table, a
    buffer of one dimension) leaves the offset far from wrapping, and a run there says nothing about it. So
    where a size grows a target, only the targets decide how far it is scaled; the other tensors only count
    in its bytes. With no target that grows with any size (the evidence could not name its pointer, or
    ``--large`` asked without evidence), every tensor is a target, as before."""
    if targets and any(t["name"] in targets and t["growth"] for t in tensors):
        return _plans(sizes, tensors, free_bytes, by, set(targets))
    return _plans(sizes, tensors, free_bytes, by, None)


def _plans(sizes: dict, tensors: list[dict], free_bytes: int, by: str, targets) -> list[dict]:
    ints = int_sizes(sizes)
    found = []
    for key, v in ints.items():
        if v <= 0:
            continue
        grows = [t for t in tensors if t["growth"].get(key, 0) > 0 and (targets is None or t["name"] in targets)]
        if not grows:
            continue
        # the tensor that reaches the limit at the smallest value of this size
        need = []
        for t in grows:
            unit = t["itemsize"] if by == "bytes" else 1
            target = LIMIT * MARGIN / unit
            factor = max(1.0, (target / max(1, t["numel"])) ** (1.0 / t["growth"][key]))
            align = min(v & -v, 64)  # the default's own divisibility kept (an even width stays even)
            need.append((-(-max(math.floor(v * factor) + 1, v + 2) // align) * align, t))
        new, tensor = min(need, key=lambda x: x[0])
        scale = new / v
        total = sum(int(t["numel"] * scale ** t["growth"].get(key, 0)) * t["itemsize"] for t in tensors
                    if t.get("counted", True))
        numel = int(tensor["numel"] * scale ** tensor["growth"][key])
        cand = {"sizes": {**sizes, key: new}, "key": key, "tensor": tensor["name"], "numel": numel,
                "bytes": numel * tensor["itemsize"], "total_bytes": total, "growth": tensor["growth"][key]}
        if total <= (1 - KEEP_FREE) * free_bytes:
            found.append(cand)
    order, least = list(ints), min((c["total_bytes"] for c in found), default=1)
    # within 1% of each other (rounding) the earlier size first: a batch before a row's width
    return sorted(found, key=lambda c: (round(c["total_bytes"] / least, 2), order.index(c["key"])))


def growth(numel_at: dict, base: int, key_values: dict) -> dict:
    """{size: exponent} from a tensor's numel at the defaults (``base``) and with each size alone
    multiplied by ``key_values[size]`` (``numel_at[size]``)."""
    out = {}
    for k, factor in key_values.items():
        n = numel_at.get(k)
        if n is None or base <= 0 or n <= base or factor <= 1:
            continue
        out[k] = round(math.log(n / base) / math.log(factor) * 2) / 2  # to the nearest half
    return out


def sample_rows(n_rows: int, boundary_row: int, k: int = SAMPLE_ROWS) -> list[tuple[int, int]]:
    """Row ranges to compare: the first ``k``, ``k`` either side of ``boundary_row``, the last ``k``
    (merged where they overlap)."""
    spans = sorted({(0, min(k, n_rows)), (max(0, boundary_row - k), min(n_rows, boundary_row + k)),
                    (max(0, n_rows - k), n_rows)})
    out = []
    for a, b in spans:
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        elif a < b:
            out.append((a, b))
    return out


def _explicit(ctx: Context) -> bool:
    return bool(ctx.options.get("large"))


def _skip(ctx: Context) -> str | None:
    """Asked for (``--large``, on a GPU), or an int32 offset in the launched kernels (the evidence, kept on the
    board for the run); else why not."""
    if ctx.backend == "gpu" and _explicit(ctx):
        return None
    from harness.probe import int32_offsets

    ctx.board.int32_offsets = int32_offsets.here(ctx)
    if ctx.board.int32_offsets:
        return None
    return ("no int32 offset that grows with a size in the launched kernels' addresses (a program id, or an "
            "index loaded from a 32-bit tensor, times a runtime size, not widened to int64); --large runs sizes past 2**31 elements on the GPU anyway")


def _holds(ctx: Context) -> float:
    """What the detectors before it on the GPU leave it of the budget, where the launched kernels hold the evidence
    (the run it decides on, inside the budget): the time its pilot says the run needs (``_hold_for``); nothing
    under the interpreter, with ``--large`` (its own time) or without the evidence. Decided once the defaults'
    launch was seen (kept on the board)."""
    from harness.run.triton_compat import launched_kernels

    if ctx.backend != "gpu" or _explicit(ctx):
        return 0.0
    if ctx.board.large_hold is None:
        if not launched_kernels():  # nothing launched yet (the reference detector comes first): asked again later
            return 0.0
        from harness.probe import int32_offsets

        try:
            found = int32_offsets.here(ctx)
        except Exception:  # noqa: BLE001  the launcher raised again: nothing kept (the detectors say why)
            found = []
        ctx.board.int32_offsets = found or ctx.board.int32_offsets
        ctx.board.large_hold = _hold_for(ctx) if found else 0.0
    return ctx.board.large_hold


def _hold_for(ctx: Context) -> float:
    """The seconds the run past 2**31 elements needs, from its pilot made now (kept for the run): the predicted
    launch, and its reference where that fits too, over LARGE_SHARE (the run's slice of what is left when it
    begins), and LARGE_HOLD_MARGIN_S; nothing where that passes LARGE_HOLD_MAX_S (the run will not be made: the
    detectors before it keep the time) or no size fits the GPU's memory; LARGE_HOLD_S where the pilot cannot
    tell (it raised or was stopped: the run decides). A fixed hold kept 6 s for a run predicted at 37 s, which was
    then not made, and 6 s for runs that needed 8 to 9 (the H200 board of 030ab1e)."""
    import torch

    try:
        free, _ = torch.cuda.mem_get_info()
        first = plans(ctx.target.sizes, profile(ctx), free, "elements", targets(ctx))[:1]
    except Exception:  # noqa: BLE001  the launcher or the GPU refused: the run decides
        return LARGE_HOLD_S["gpu"]
    if not first:
        return 0.0
    budget = ctx.budget
    budget.deadline = budget.now() + LARGE_HOLD_MAX_S["gpu"]  # the pilot's own end (the next detector begins anew)
    if budget.ends is not None:
        budget.deadline = min(budget.deadline, budget.ends)
    got = _pilot(ctx, first[0])
    if got is None:
        return LARGE_HOLD_S["gpu"]
    most = LARGE_HOLD_MAX_S["gpu"] * LARGE_SHARE
    cost, with_reference = fits(got["took"], got["ref_took"], got["scale"], most, got["once"])
    if cost is None:
        return 0.0
    need = (cost + (got["ref_took"] * got["scale"] if with_reference else 0.0)) / LARGE_SHARE + LARGE_HOLD_MARGIN_S
    return min(need, LARGE_HOLD_MAX_S["gpu"])


def _tensors(ctx: Context, sizes: dict, launch: bool = True) -> tuple[list, dict]:
    """The inputs' tensors at ``sizes`` (made on the backend), and ``launch``: the launcher's result's and the
    kernels' own tensor arguments (a buffer the launcher makes for them: "kernel:argument"); and the inputs."""
    import torch

    from harness.probe import execute as X
    from harness.run.triton_compat import launch_tensors
    from harness.run.worker import call_with

    inputs = X.make(ctx.target, sizes, ctx.seed, ctx.backend)
    found = [(k, v) for k, v in inputs.items() if isinstance(v, torch.Tensor)]
    out = [{"name": k, "numel": v.numel(), "itemsize": v.element_size()} for k, v in found]
    if not launch:
        return out, inputs
    with launch_tensors() as args:
        got = call_with(ctx.target.launcher, X.clone_inputs(inputs))
    if isinstance(got, torch.Tensor) and not any(got.data_ptr() == v.data_ptr() for _, v in found):
        out.append({"name": "(result)", "numel": got.numel(), "itemsize": got.element_size()})
    # every kernel argument (the evidence names its pointer so): one that is no input (its numel differs from
    # every input's) is the launcher's own buffer, counted; one with an input's numel is that input again
    numels = {t["numel"] for t in out}
    out += [{"name": f"{kernel}:{arg}", "numel": n, "itemsize": size, "counted": n not in numels}
            for (kernel, arg), (n, size) in args.items()]
    return out, inputs


def profile(ctx: Context, launch: bool = True) -> list[dict]:
    """Each tensor's numel and itemsize at the defaults, and how it grows with each size (``launch``: the result
    and the kernels' own tensor arguments too, from a run at each size; else make_inputs' alone)."""
    sizes = int_sizes(ctx.target.sizes)
    base, _ = _tensors(ctx, ctx.target.sizes, launch)
    factors, at = {}, {}
    for k, v in sizes.items():
        if v <= 0:
            continue
        factors[k] = 2
        try:
            grown, _ = _tensors(ctx, {**ctx.target.sizes, k: 2 * v}, launch)
        except Exception:  # noqa: BLE001  make_inputs (or the launcher) refuses: this size is not scaled
            continue
        for t in grown:
            at.setdefault(t["name"], {})[k] = t["numel"]
    for t in base:
        t["growth"] = growth(at.get(t["name"], {}), t["numel"], factors)
    return base


def large(ctx: Context) -> list:
    """The run past 2**31 (asked for, or decided on from the evidence), or the evidence's warning."""
    import torch

    if ctx.backend != "gpu":  # the interpreter: the evidence alone, a warning
        return [hazard(ctx, ctx.board.int32_offsets, profile(ctx, launch=False))]
    if not torch.cuda.is_available():
        return []
    auto = not _explicit(ctx)
    if auto:
        ctx.budget.begin_share(LARGE_SHARE)
    tensors = profile(ctx)
    if auto:  # said at once: a run the budget's end stops (or a worker ended there) must not take it along
        said = hazard(ctx, ctx.board.int32_offsets, tensors)
        if ctx.emit is not None:
            ctx.emit(event="finding", **said.to_json())  # the runner keeps one P406, none after a verdict
    free, _ = torch.cuda.mem_get_info()
    out, tried, compared = [], set(), False
    for by in ("elements", "bytes"):
        for p in plans(ctx.target.sizes, tensors, free, by, targets(ctx))[:3]:
            key = tuple(sorted(p["sizes"].items()))
            if key in tried:
                continue
            with_reference = True
            if auto:
                why, with_reference = _too_long(ctx, p, by)
                if why:
                    return [said, _not_run(ctx, why)]
            tried.add(key)
            found = None
            with (ctx.budget.until_deadline() if auto else contextlib.nullcontext()):
                found = run_at(ctx, p, by, with_reference)
            if found is None:  # stopped at its slice's end
                return [said, _not_run(ctx, f"the run at {_fmt(p['sizes'])} was stopped at the end of its slice of the "
                                      f"probe's budget")]
            try:
                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001  a broken context (an illegal address): the worker starts afresh
                pass
            if found != REFUSED:
                out += found
                compared = compared or not any(f.code == "P404" and f.severity == INFO for f in found)
                break
        if any(f.severity != "info" for f in out):
            break
    if not tried:
        out.append(ctx.finding("P404", f"no size scales a tensor past 2**31 elements within "
                                       f"{(1 - KEEP_FREE) * free / 2**30:.0f} GiB of free GPU memory (information)",
                               severity="info"))
    # a verdict: shown wrong, or sampled rows compared and right (not: refused at every size, values not checked)
    ctx.board.large_verdict = "wrong" if any(f.severity == ERROR for f in out) else "right" if compared else None
    if auto and ctx.board.large_verdict is None:  # the evidence stands, unshown either way
        out.insert(0, said)
    return out


def targets(ctx: Context) -> set:
    """The tensors the evidence's int32 offsets address, "kernel:argument" (``plans``)."""
    return {f"{e['kernel']}:{e['pointer']}" for e in (ctx.board.int32_offsets or []) if e.get("pointer")}


def hazard(ctx: Context, found: list, tensors: list) -> object:
    """The P406 note: the int32 offsets, the size that takes the tensor they address past 2**31 cheapest."""
    from harness.probe import int32_offsets

    first = plans(ctx.target.sizes, tensors, float("inf"), targets=targets(ctx))[:1]
    size = first[0]["key"] if first else None
    tensor = f"'{first[0]['tensor']}'" if first else ""
    return ctx.finding("P406", int32_offsets.hazard_text(found, size, tensor)[:400], severity=INFO,
                       line=int32_offsets.where(found))


def _not_run(ctx: Context, why: str):
    return ctx.finding("P000", f"the run past 2**31 elements was not made: {why}; --large makes it outside the "
                               f"budget"[:400], severity=INFO)


def _too_long(ctx: Context, p: dict, by: str) -> tuple[str, bool]:
    """(why the planned run does not fit the slice of the budget left, "" where it does; whether its float64
    reference fits that slice too), from the pilot (``_pilot``). Where the launch fits and the reference does not
    (a reference over the whole problem on the CPU), the run is made without it: a wrapped offset most often ends
    in an illegal address, which needs no reference to show."""
    left = ctx.wrap_up_by() - ctx.budget.now()
    if left <= 0:
        return "the probe's budget had no time left for it", False
    got = _pilot(ctx, p)
    if got is None:  # the pilot itself failed: the run decides
        return "", True
    took, ref_took, once, scale = got["took"], got["ref_took"], got["once"], got["scale"]
    cost, with_reference = fits(took, ref_took, scale, left, once)
    if ctx.late() or cost is None:
        return (f"the run at {_fmt(p['sizes'])} ('{p['tensor']}' {p['numel']:,} elements) would take about "
                f"{(took - ref_took) * scale + once:.0f}s (a pilot at {p['key']}={got['small']} took "
                f"{took - ref_took:.1f}s{f', and {once:.1f}s more once (compiling)' if once else ''}), more than the "
                f"{max(0.0, left):.0f}s the probe's budget leaves it"), False
    return "", with_reference


def _pilot(ctx: Context, p: dict) -> dict | None:
    """A pilot run at 1/PILOT of the planned tensors (make_inputs and the launcher's calls, timed apart from the
    reference where the run computes it; ``_once_cost``), each step's time growing with the elements it makes,
    copies or reads: {"took", "ref_took", "once", "scale" (the run's work over the pilot's), "small"}; None where
    the pilot failed or was stopped. Made once a plan (kept on the board: ``_holds`` makes it early to size the
    time held for the run, which then reuses it)."""
    import torch

    from harness.probe import execute as X
    from harness.run.worker import call_with

    plan = sorted(p["sizes"].items())
    if (kept := ctx.board.large_pilot) is not None and kept["plan"] == plan:
        return kept["got"]
    key, v0, v = p["key"], ctx.target.sizes[p["key"]], p["sizes"][p["key"]]
    exponent = p.get("growth") or 1.0
    small = max(v0, int(v / PILOT ** (1.0 / exponent)))
    now, t0, inputs, ref_took, once, done = ctx.budget.now, ctx.budget.now(), None, 0.0, 0.0, False
    got = None
    try:
        with ctx.budget.until_deadline():
            inputs = _make(ctx, {**ctx.target.sizes, key: small})
            if _reference_fits(inputs):
                r0 = now()
                X.reference(ctx.target, inputs)
                ref_took = now() - r0
            c0 = now()
            once, steady = _once_cost(ctx, lambda: call_with(ctx.target.launcher, inputs))
            calls = now() - c0
            done = True
        if done:  # the pilot's steps, one call of them (the steady one), and what its first call paid once
            got = {"took": now() - t0 - calls + steady, "ref_took": ref_took, "once": once,
                   "scale": (v / small) ** exponent, "small": small}
    except Exception:  # noqa: BLE001  the pilot itself failed
        got = None
    inputs = None
    torch.cuda.empty_cache()
    ctx.board.large_pilot = {"plan": plan, "got": got}
    return got


def _once_cost(ctx: Context, call) -> tuple[float, float]:
    """The pilot's calls: (once, one call's own seconds). Once: the seconds of the first call that a second at the
    same sizes does not take again (the launch's compilation for a new specialization, a first allocation), paid
    once by the run too, never scaled up with it. An autotuned kernel (tuned in this process: ``Budget.run_cost``)
    benchmarks each config at the run's own sizes, which scales with them: one call, all of it scaled but the
    seconds it spent compiling (Triton's compile hooks, timed: ``TuningCounter.compiling``), which a size does not
    change: scaled with the rest, a pilot at 1/16 of the run's tensors counted its compilation 16 times over."""
    import torch

    now = ctx.budget.now
    compiled = _compiling(ctx)
    c0 = now()
    call()
    torch.cuda.synchronize()
    first = now() - c0
    if ctx.budget.run_cost():
        once = min(first, max(0.0, _compiling(ctx) - compiled))
        return once, first - once
    c1 = now()
    call()
    torch.cuda.synchronize()
    second = now() - c1
    return max(0.0, first - second), min(first, second)


def _compiling(ctx: Context) -> float:
    """Seconds this process has spent compiling kernels so far (0 where no compile hook times them)."""
    counter = getattr(getattr(ctx, "watch", None), "counter", None)
    return float(getattr(counter, "compiling", 0.0) or 0.0)


def fits(took: float, ref_took: float, scale: float, left: float, once: float = 0.0) -> tuple[float | None, bool]:
    """(the run's predicted seconds without the reference, None where they pass ``left``; whether the reference's
    predicted seconds fit beside them) from a pilot that took ``took`` seconds in all, ``ref_took`` of them the
    reference's, at 1/``scale`` of the run's work, and ``once`` seconds more that the run pays once, unscaled
    (``_once_cost``: compiling)."""
    cost, ref_cost = (took - ref_took) * scale + once, ref_took * scale
    if cost > left:
        return None, False
    return cost, cost + ref_cost <= left


def run_at(ctx: Context, p: dict, by: str, with_reference: bool = True) -> list:
    """One run at the planned sizes: a crash, or wrong sampled rows, is P404. ``with_reference`` False: the
    float64 reference over the whole problem is not computed (the budget's slice has no time for it: the
    crash is checked, and sampled rows only where the launcher is row-wise)."""
    import torch

    from harness.errors import error_line
    from harness.probe import execute as X
    from harness.probe.context import error_where
    from harness.run.triton_compat import launch_tensors
    from harness.run.worker import call_with

    sizes = p["sizes"]
    ctx.trying = sizes
    if ctx.emit is not None:
        ctx.emit(event="trying", sizes=sizes)
    where = f"at {_fmt(sizes)} ('{p['tensor']}' holds {p['numel']:,} elements, {p['bytes']:,} bytes)"
    try:
        inputs = _make(ctx, sizes)
    except Exception:  # noqa: BLE001  make_inputs refuses this size (or it does not fit): scale another
        return REFUSED
    ref = None
    if with_reference and _reference_fits(inputs):
        try:
            ref = X.reference(ctx.target, inputs)
        except Exception:  # noqa: BLE001  (out of memory after all): sampled rows are checked another way
            ref = None
        torch.cuda.empty_cache()
    try:  # torch.empty poisoned, as in every run of the probe: a row the wrapped offsets never wrote must not show
        with launch_tensors() as launched, X.poisoned_allocations(pad=0):  # a right value a run before left there
            got = call_with(ctx.target.launcher, inputs)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001  an illegal address, most often
        from harness.probe.detectors.shapes import refused

        if refused(e) or launch_refused(e):  # the kernel's limits at this size (no block of 2**29 columns, a
            return REFUSED  # grid past CUDA's): scale another size
        if out_of_memory(e):  # the GPU's memory, not the kernel: another process's tensors took what plan counted on
            return [ctx.finding("P404", f"the GPU ran out of memory {where}: not checked (information)"[:400],
                                severity=INFO, sizes=dict(sizes))]
        return [ctx.finding("P404", f"the launcher failed {where}: {error_line(e)}"[:400], line=error_where(e),
                            sizes=dict(sizes))]
    if not _reached(p, by, inputs, launched, got):  # make_inputs or the launcher did not scale the tensor that far (a
        return REFUSED  # size clamped, `topk = min(topk, experts)`): nothing about the offset; scale another
    if not isinstance(got, torch.Tensor) or got.dim() == 0:
        return []
    boundary = _boundary_row(got, p, by)
    spans = sample_rows(got.shape[0], boundary)
    try:
        bad = _compare(ctx, got, ref, spans, inputs, p)
    except Exception:  # noqa: BLE001  the sampled rows could not be set beside a reference (shapes that do
        bad = None  # not slice the way the launcher's result does): the values are not checked
    if bad is None:
        return [_unchecked(ctx, where, sizes, with_reference)]
    if not bad:
        return []
    return [ctx.finding("P404", f"{where}: rows {bad} of the result are wrong (compared: "
                                f"{', '.join(f'{a}-{b - 1}' for a, b in spans)})"[:400], sizes=dict(sizes))]


def _unchecked(ctx: Context, where: str, sizes: dict, with_reference: bool):
    """The note of a run that did not crash and whose values could not be compared."""
    why = "does not fit" if with_reference else "was left out, its time past the budget's slice"
    return ctx.finding("P404", f"no crash {where}; values not checked (the float64 reference {why} and the "
                               f"launcher is not row-wise) (information)", severity="info", sizes=dict(sizes))


def _make(ctx: Context, sizes: dict) -> dict:
    """make_inputs at the run's sizes, all of its work on the GPU (``run/gpu_random.made_on``: its random draws and
    the CPU work between them and its ``.to(device)``, the run's whole cost at these sizes), kept where each tensor
    it gives sits where make_inputs puts it at the default sizes; else its large CPU random draws made on the GPU
    and left there; where make_inputs cannot take a GPU tensor in place of a CPU one (it mixes it with CPU
    tensors: it raises), made again with the draws copied back to the CPU."""
    import torch

    from harness.probe import execute as X

    try:
        homes = _homes(X.make(ctx.target, ctx.target.sizes, ctx.seed, ctx.backend))
        with made_on("cuda"):
            made = X.make(ctx.target, sizes, ctx.seed, ctx.backend)
        if _homes(made) == homes:
            return made
    except Exception:  # noqa: BLE001  CPU-only code (.numpy(), a CPU generator torch does not let draw there)
        pass
    made = None  # a result kept on the GPU where its tensors sit elsewhere: its memory given back first
    torch.cuda.empty_cache()
    try:
        with drawn_on("cuda", keep=True):
            return X.make(ctx.target, sizes, ctx.seed, ctx.backend)
    except Exception:  # noqa: BLE001  CPU code met a GPU tensor: the draws copied back
        torch.cuda.empty_cache()
    with drawn_on("cuda"):
        return X.make(ctx.target, sizes, ctx.seed, ctx.backend)


def _homes(inputs: dict) -> dict:
    """Where each tensor of make_inputs' result sits (its device's type)."""
    import torch

    return {k: v.device.type for k, v in inputs.items() if isinstance(v, torch.Tensor)}


def _reached(p: dict, by: str, inputs: dict, launched: dict, got) -> bool:
    """Whether the planned tensor passed 2**31 elements (or bytes) in the run: make_inputs or the launcher may
    clamp the size scaled (``topk = min(topk, num_experts)``), and a run short of the limit says nothing about
    the offset. A tensor the run did not show (no such input, argument or result) is taken as planned."""
    import torch

    name = p["tensor"]
    if name == "(result)":
        seen = (got.numel(), got.element_size()) if isinstance(got, torch.Tensor) else None
    elif ":" in name:
        seen = launched.get(tuple(name.split(":", 1)))
    else:
        t = inputs.get(name)
        seen = (t.numel(), t.element_size()) if isinstance(t, torch.Tensor) else None
    if seen is None:
        return True
    numel, size = seen
    return (numel * size if by == "bytes" else numel) > LIMIT


def out_of_memory(e: BaseException) -> bool:
    """torch's (or Triton's) allocation failed for want of GPU memory: a limit of the machine, not a finding."""
    return type(e).__name__ == "OutOfMemoryError" or "out of memory" in str(e).lower()


def launch_refused(e: BaseException) -> bool:
    """CUDA refused the launch itself ("invalid argument": most often a grid past its limits, as a
    size scaled to 2**31 elements asks of a kernel that puts that size on grid axis 1 or 2)."""
    return "invalid argument" in str(e) and "Triton Error [CUDA]" in str(e)


def _reference_fits(inputs: dict) -> bool:
    """The inputs' float64 copies (twice: the reference's own temporaries) in the host's memory and the GPU's."""
    import os

    import torch

    need = 2 * 8 * sum(v.numel() for v in inputs.values() if isinstance(v, torch.Tensor))
    free_gpu, _ = torch.cuda.mem_get_info()
    host = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    return need < (1 - KEEP_FREE) * free_gpu and need < HOST_FRACTION * host


def _boundary_row(got, p: dict, by: str) -> int:
    """The result row that lines up with element (or byte) 2**31 of the largest tensor."""
    unit = LIMIT if by == "elements" else LIMIT // max(1, p["bytes"] // max(1, p["numel"]))
    return min(got.shape[0] - 1, int(got.shape[0] * unit / max(1, p["numel"])))


def _compare(ctx: Context, got, ref, spans, inputs: dict, p: dict) -> list | None:
    """The sampled row ranges that are wrong ([] none), or None when nothing could check them."""
    import torch

    from harness.core import compare
    from harness.run.worker import call_with

    rtol, atol = ctx.target.tolerance_for(got.dtype)
    bad = []
    if ref is not None and tuple(ref.shape) == tuple(got.shape):
        for a, b in spans:
            if not compare.compare(got[a:b].detach().to("cpu"), ref[a:b], rtol, atol)["close"]:
                bad.append(f"{a}-{b - 1}")
        return bad
    key = p["key"]
    n = p["sizes"][key]
    tensors = {k: v for k, v in inputs.items() if isinstance(v, torch.Tensor)}
    if got.shape[0] != n or not tensors or any(v.dim() == 0 or v.shape[0] != n for v in tensors.values()):
        return None  # not row-wise in the scaled size
    for a, b in spans:
        part = {k: (v[a:b].contiguous() if isinstance(v, torch.Tensor) else v) for k, v in inputs.items()}
        for k in int_sizes(p["sizes"]):
            if k == key and k in part:
                part[k] = b - a
        try:
            small = call_with(ctx.target.launcher, part)
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001  the sliced problem is not one the launcher takes
            return None
        if not isinstance(small, torch.Tensor) or small.shape != got[a:b].shape:
            return None
        if not compare.compare(got[a:b].detach().to("cpu"), small.detach().to("cpu").double(), rtol, atol)["close"]:
            bad.append(f"{a}-{b - 1}")
    return bad


P404 = Code("P404", ERROR, "wrong past 2**31 elements or bytes (int32 offsets): sampled rows against the reference",
            ("int32-offset-overflow", "int32-pid-stride-overflow"), otherwise="info where those sizes could not be run")
P406 = Code("P406", INFO, "an int32 offset that grows with a size in a launched kernel's address (a program id, "
                             "or an index loaded from a 32-bit tensor, times a runtime size, not widened): a hazard "
                             "past 2**31 elements, not shown wrong",
            ("int32-offset-overflow", "int32-pid-stride-overflow"))


DETECTOR = Detector("large", "sizes past 2**31 elements and bytes on the GPU (int32 offsets), sampled rows checked: "
                             "where the launched kernels hold an int32 offset, or --large", large,
                    backends=("gpu", "interpreter"), process={"gpu": 0, "interpreter": 1}, rank=10, skip=_skip,
                    timeout_severity="info", budgeted=lambda options: not options.get("large"),
                    holds=_holds, death_code="P404", codes=(P404, P406))  # asked for with --large, its own work (inputs and a reference past 2**31)
# keeps its own time, outside the probe's --budget; decided on by the probe, a slice of the budget. On the GPU it
# runs last in the main process (rank 10, after shape fuzzing): side by side with it (its own process, as first
# built) it took 85% of a 20 s budget from the start and, on the H200 board with five probes at once, starved the
# reference detector and shape fuzzing of the GPU (docs/bugs/rows/gpu+interpreter: gemlite's n-tail entry lost its
# P401); after them, taking only what they left, it was starved in turn (skipped at the budget's end on the board of
# 3f90368), so where it will run they leave it the time its pilot, made early, says it needs (``holds``:
# ``_hold_for``; a fixed ``LARGE_HOLD_S`` until session 20)
