"""The shape-fuzzing detector (in the worker): seeded sizes around the defaults, each run
with guard bands against the reference, a failure shrunk to the smallest failing sizes.

Each size tried is announced on the events file before it runs, so a hang or a crash
of the whole process still names the sizes that caused it.

Under the interpreter it first checks CUDA's grid limits (2**31 - 1 programs on axis 0,
65,535 on axes 1 and 2) at sizes the GPU meets, which the interpreter could never run:
the launcher is called with ``dry_run`` on (``harness.run.interp_instrument``: each
launch's grid is computed and checked, no program runs). At the GPU's sizes
(``GPU_SIZES``, a case folder's ``[sizes.gpu]``) a grid past a limit is a problem
(P403); at each size alone raised to 65,537 (a guess at what the GPU may meet) it is
information. Any detector's launch past a limit, at any sizes, is refused and is P403 too.
"""

from __future__ import annotations

import os

from harness.probe import execute as X
from harness.probe import fuzz
from harness.probe import kernels as source
from harness.probe.budget import FUZZ_S, SHRINK_S
from harness.probe.context import Context, crash as _crash, device_fault, fmt as _fmt, grid_finding, grid_limit_hit
from harness.probe.context import (cuda_usable, int_sizes, label as _label, never_written, over_memory_cap, pinned_names,
                                   told_own_failure)
from harness.probe.context import wrong as _wrong
from harness.probe.execute import innermost_file
from harness.probe.detectors import Detector
from harness.probe.diagnosis import EMPTY_THERE
from harness.probe.findings import ERROR, INFO, P203, P204, Code

DEFAULT_TRIALS = 24
MORE_TURNS = 4  # turns of more seeded sizes while fuzzing's own time lasts (_more)


def why_fails(ctx: Context, sizes: dict) -> str | None:
    """Why the kernel fails at ``sizes`` (a short reason), or None when it passes or the sizes are refused."""
    got = fail(ctx, sizes)
    return None if got is None else got[1]


def fail(ctx: Context, sizes: dict) -> tuple[str, str] | None:
    """(kind, why) when the kernel fails at ``sizes``, or None when it passes or the sizes are refused.
    The kind is the mechanism's family (``KINDS``). A failure that only poison in masked lanes causes
    (0 there gives the right result, as today's GPUs do) is noted in ``ctx.board.poison_only`` and
    not counted: it is the reference detector's warning. One that 0 there leaves wrong is reported as
    it is with 0 (how a GPU fails today: a few values off, not the poison's NaN everywhere), as the
    reference detector reports it. One that only the TF32 rounding of an fp32 ``tl.dot`` left at
    Triton's default causes is not counted either (``ctx.board.tf32_only``: right without it)."""
    t = ctx.target
    ctx.trying = sizes
    if ctx.emit is not None:
        ctx.emit(event="trying", sizes=sizes)
    try:
        inputs = X.make(t, sizes, ctx.seed, ctx.backend)
        ref = X.reference(t, inputs)
    except Exception:  # noqa: BLE001  make_inputs or the reference refuses these sizes: not the kernel's fault
        return None
    ctx.board.compared = (ctx.board.compared or 0) + 1  # a size checked (ProbeReport.checked reads it)
    poison = ctx.options.get("poison_masked", True)
    with ctx.instrument(poison_masked=poison) as rec:
        c = ctx.call(inputs, ref=ref)
    got = _why(ctx, sizes, inputs, ref, c)
    if got is not None and rec is not None and rec.poisoned_loads:
        with ctx.instrument(poison_masked=False):
            zero = ctx.call(inputs, ref=ref)
        plain = _why(ctx, sizes, inputs, ref, zero)
        if plain is None:
            if ctx.board.poison_only is None:
                ctx.board.poison_only = {"sizes": dict(sizes), "lines": list(rec.poison_lines), "why": got[1]}
            return None
        got = plain  # wrong with 0 there too: the failure is the one a GPU gives, not the poison's (its NaN)
    if got is not None and got[0] in ("wrong values", "non-finite"):
        from harness.probe.tf32_rounding import chosen, right_without_tf32

        if (lines := right_without_tf32(ctx, inputs, ref, rec)) is not None:
            if ctx.board.tf32_only is None:
                ctx.board.tf32_only = {"sizes": dict(sizes), "lines": lines, "why": got[1],
                                       "chosen": chosen(lines)}
            return None
    return got


# the kinds of failure, each its own P401 (the defect class it points to)
KINDS = {"wrote outside": "out-of-bounds-write", "never written": "unwritten-output", "non-finite": "",
         "wrong values": ""}  # and "raised <ExceptionType>"


def _why(ctx: Context, sizes: dict, inputs: dict, ref, c) -> tuple[str, str] | None:
    t = ctx.target
    if c.error is not None:
        from harness.errors import error_line

        if told_own_failure(ctx, c.error):  # the probe's own analysis raised: nothing about the kernel (a P000 note)
            return None
        if refused(c.error) or over_memory_cap(c.error):  # a limit (Triton's, or the probe's own memory cap),
            ctx.refused.append((sizes, error_line(c.error)))  # not a wrong result
            return None
        if not device_fault(c.error):  # a loud error of the launcher or Triton at a fuzzed size: its domain,
            ctx.refused.append((sizes, error_line(c.error), "raised"))  # a note (_refusals), not a misadventure
            return None
        return f"raised {type(c.error).__name__}", f"raised {error_line(c.error)}"
    if past := c.guard.get("wrote_past_end"):
        return "wrote outside", f"wrote outside {', '.join(_label(n) for n in past)}"
    # a buffer the launcher allocated and the kernel left partly unwritten while the result is right
    # is scratch (the guards detector's information), not a failure
    if not c.cmp["close"] and (kept := sum(never_written(ctx, inputs, c, ref).values())):
        return "never written", f"left {kept} elements of a result never written"
    if not c.cmp["close"]:
        kept = X.unwritten_in_place(t, inputs, c.returned, pad=ctx.pad) if c.returned else 0
        if kept:
            return "never written", f"left {kept} elements of '{c.returned}' never written"
        return ("non-finite" if c.cmp.get("nonfinite") else "wrong values"), _wrong(c.cmp)
    return None


def refused(e: BaseException) -> bool:
    """An error by which Triton declines to build the kernel for some sizes (a ``tl.dot`` dimension
    under 16, a block too large, no autotune config left after pruning), or the launcher's own
    ``assert`` on its sizes, before anything ran: the kernel's stated limits, not a wrong result."""
    names = {c.__name__ for c in type(e).__mro__}
    return bool(names & {"CompilationError", "OutOfResources"}) or (
        "AutotunerError" in names or "No valid autotuner configs" in str(e)) or _launcher_assert(e) or (
        _raised_in(e, "language"))


def _raised_in(e: BaseException, package: str) -> bool:
    """Raised by Triton's ``triton.<package>`` (``language``: the program is not valid Triton at
    these sizes, e.g. a ``tl.arange`` range that is not a power of 2, which a GPU compile refuses too)."""
    import triton

    return innermost_file(e).startswith(os.path.join(os.path.dirname(triton.__file__), package) + os.sep)


def _launcher_assert(e: BaseException) -> bool:
    """An ``assert`` in the user's own Python (a launcher's precondition on its sizes), not a
    ``tl.device_assert`` (which the interpreter raises from inside Triton as an AssertionError)."""
    import triton

    if not isinstance(e, AssertionError) or e.__traceback__ is None:
        return False
    return not innermost_file(e).startswith(os.path.dirname(triton.__file__) + os.sep)


def _refusals(ctx: Context) -> list:
    """One information finding for the sizes Triton would not compile at, if any, and one for the
    sizes at which the launcher or Triton raised (P405), each at its smallest sizes."""
    out = []
    for raised in (False, True):
        seen = [r for r in ctx.refused if (len(r) > 2) == raised]
        if not seen:
            continue
        sizes, why = min(seen, key=lambda r: sum(v for v in r[0].values() if isinstance(v, int)))[:2]
        n = f"{len(seen)} fuzzed size{'s' if len(seen) > 1 else ''}"
        out.append(ctx.finding("P405", f"raised at {n}, e.g. {_fmt(sizes)}: {why} (information: a loud error at "
                                       f"sizes the launcher or Triton does not take, not a silent wrong result)"[:400],
                               severity=INFO, sizes=dict(sizes)) if raised else
                   ctx.finding("P402", f"does not compile at {n}, e.g. {_fmt(sizes)} (information: {why})"[:300],
                               severity=INFO))
    return out


def _empty(ctx: Context) -> list:
    """Each size at 0, where make_inputs and the reference accept it."""
    out = []
    for k, v in ctx.target.sizes.items():
        if not isinstance(v, int) or isinstance(v, bool):
            continue
        sizes = {**ctx.target.sizes, k: 0}
        try:
            inputs = X.make(ctx.target, sizes, ctx.seed, ctx.backend)
            ref = X.reference(ctx.target, inputs)
        except Exception:  # noqa: BLE001
            continue
        if not any(getattr(v, "numel", lambda: 1)() == 0 for v in inputs.values()):
            continue  # 0 is an ordinary value of this size (a padding, a count): fuzzing covers it
        with ctx.instrument():
            c = ctx.call(inputs, ref=ref)
        if c.error is not None:  # refused: information (the kernel need not accept empty input)
            out.append(_crash(ctx, c.error, sizes))
            out[-1].code, out[-1].severity = "P402", INFO
            out[-1].message = f"does not accept {k}=0 (information: {out[-1].message})"[:300]
        elif not c.cmp["close"] and c.out.shape != c.ref.shape:  # the reference disagrees on the shape
            out.append(ctx.finding("P402", f"at {_fmt(sizes)} the result has shape {tuple(c.out.shape)} and the "
                                           f"reference {tuple(c.ref.shape)} (information)", severity=INFO,
                                   sizes=dict(sizes)))
        elif not c.cmp["close"] and not bool(c.ref.isfinite().all()):  # the reference has no answer there
            out.append(ctx.finding("P402", f"at {_fmt(sizes)}: {_wrong(c.cmp)} (information: the reference is not "
                                           f"finite at an empty input)", severity=INFO, sizes=dict(sizes)))
        elif not c.cmp["close"]:  # its sizes, a 0 among them: never taken for the defaults' own failure
            out.append(ctx.finding("P402", f"at {_fmt(sizes)}: {_wrong(c.cmp)}", sizes=dict(sizes)))
    return out


PAST_Y = 65_537  # a size just past CUDA's 65,535 programs on grid axes 1 and 2
GRID_VOLUME = {ERROR: 1 << 28, INFO: 1 << 25}  # the largest product of sizes a dry run builds inputs for


def _grid_at(ctx: Context, sizes: dict) -> dict | None:
    """The first launch past CUDA's grid limits when the launcher runs at ``sizes`` (no program run)."""
    from harness.run.worker import call_with

    if fuzz.volume(sizes) > GRID_VOLUME[ERROR]:
        return None
    ctx.trying = sizes
    try:
        inputs = X.make(ctx.target, sizes, ctx.seed, ctx.backend)
    except Exception:  # noqa: BLE001  make_inputs refuses these sizes (or they do not fit in memory)
        return None
    with ctx.instrument(dry_run=True) as rec:
        try:
            call_with(ctx.target.launcher, inputs)
        except Exception as e:  # noqa: BLE001  only the grid matters here
            if rec.grid_limits or grid_limit_hit(e):
                return rec.grid_limits[0] if rec.grid_limits else grid_limit_hit(e)
    return rec.grid_limits[0] if rec.grid_limits else None


def grid_limits(ctx: Context) -> list:
    """CUDA's grid limits at the GPU's sizes (a problem) and at each size alone past 65,535 (information)."""
    t = ctx.target
    if ctx.backend != "interpreter":
        return gpu_sizes_run(ctx)
    plans = [(t.gpu_sizes, ERROR)] if t.gpu_sizes and t.gpu_sizes != t.sizes else []
    for k, v in t.sizes.items():
        hi = fuzz.size_range(t.ranges, k)[1]
        if isinstance(v, int) and not isinstance(v, bool) and 0 < v < PAST_Y and (hi is None or hi >= PAST_Y):
            if fuzz.volume({**t.sizes, k: PAST_Y}) <= GRID_VOLUME[INFO]:
                plans.append(({**t.sizes, k: PAST_Y}, INFO))
    out, seen = [], set()
    for sizes, severity in plans:
        if ctx.late():
            break
        hit = _grid_at(ctx, sizes)
        if hit is None or (hit["kernel"], hit["axis"], hit["line"]) in seen:
            continue
        seen.add((hit["kernel"], hit["axis"], hit["line"]))
        f = grid_finding(ctx, hit, f" at sizes {_fmt(sizes)}", severity=severity)
        if severity == INFO:
            f.message = f"{f.message} (information: {PAST_Y:,} is the probe's guess at a size the GPU may meet)"
        out.append(f)
    from harness.run.triton_compat import reset_autotune_caches

    reset_autotune_caches(t.kernel)  # the dry runs tuned nothing worth keeping
    ctx.trying = None
    return out


def gpu_sizes_run(ctx: Context) -> list:
    """On a GPU, the sizes the file says the GPU meets (GPU_SIZES) run for real: a launch refused
    there, where the defaults ran, is most often a grid past CUDA's limits (P403; CUDA says only
    "invalid argument"); a wrong result there is a P401."""
    t = ctx.target
    if not t.gpu_sizes or t.gpu_sizes == t.sizes or ctx.late():
        return []
    huge = fuzz.volume(t.gpu_sizes) > GRID_VOLUME[ERROR]
    if huge and not ctx.options.get("large"):  # sizes past what a float64 reference checks quickly: --large's
        return []
    got = _crashes(ctx, t.gpu_sizes) if huge else fail(ctx, t.gpu_sizes)
    ctx.trying = None
    if got is None:
        return []
    kind, why = got
    at = f"at the GPU's sizes {_fmt(t.gpu_sizes)} (GPU_SIZES; the defaults ran)"
    if "out of memory" in why.lower():  # this GPU is too small for them: nothing shown
        return [ctx.finding("P401", f"not run {at}: {why}"[:300], severity=INFO)]
    if kind.startswith("raised") and "invalid argument" in why:
        return [ctx.finding("P403", f"the launch failed {at}: {why}; CUDA answers a grid past its limits (65,535 "
                                    f"programs on axes 1 and 2) this way")]
    return [ctx.finding("P401", f"{kind}: {at}: {why}")]


def _crashes(ctx: Context, sizes: dict) -> tuple[str, str] | None:
    """One launch at ``sizes`` with no reference (too large to check quickly): ("raised ...", why)
    when it fails, None when it runs or the sizes are refused."""
    import torch

    from harness.errors import error_line
    from harness.run.worker import call_with

    ctx.trying = sizes
    try:
        inputs = X.make(ctx.target, sizes, ctx.seed, ctx.backend)
    except Exception:  # noqa: BLE001  make_inputs refuses them, or they do not fit
        return None
    try:
        call_with(ctx.target.launcher, inputs)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001
        return None if refused(e) or told_own_failure(ctx, e) else (f"raised {type(e).__name__}", error_line(e))
    return None


def shapes(ctx: Context) -> list:
    """The grid limits at the GPU's sizes, then seeded sizes around the defaults and the launcher's
    thresholds; each distinct failure shrunk to the smallest sizes that fail its way."""
    found = grid_limits(ctx)
    if ctx.backend == "gpu" and found and not cuda_usable():  # an illegal address at the GPU's sizes: every
        return found                                            # launch after it fails the same way
    ctx.board.fuzz_now = {"grid": found}  # what the budget's end keeps (partial)
    found += fuzz_sizes(ctx)
    ctx.board.fuzz_now = None
    return found


def partial(ctx: Context) -> list:
    """Shape fuzzing (or shapes-rest) stopped at the end of the probe's budget: the grid findings, and
    each failure class met so far that no finding reported yet, at the sizes where it was first met
    (not shrunk: there was no time left to)."""
    now, ctx.board.fuzz_now = ctx.board.fuzz_now or {}, None
    st = now.get("st")
    out = list(now.get("grid", []))
    for key, (first, why, n) in (st["classes"].items() if st else ()):
        if key not in st["reported"]:
            out.append(_p401(ctx, key[0], first, first, n, None, why))
    return out


def fuzz_sizes(ctx: Context) -> list:
    """Seeded sizes around the defaults, the thresholds of the launcher's own branches and index limits;
    every failure classed by its kind (and by the thresholds its sizes cross), one P401 per class,
    each shrunk to the smallest sizes that fail the same way. Where a failure cut the sizes short (the
    probe's budget keeps the diagnosis its time), ``ctx.board.fuzz_left`` keeps the rest for
    ``shapes-rest``, after the diagnosis."""
    st = _plan(ctx)
    ctx.board.fuzz_now = {**(ctx.board.fuzz_now or {}), "st": st}
    try_sizes(ctx, st)
    ctx.board.fuzz_left = st if st["cut"] else None
    out = _empty(ctx) if ctx.options.get("empty", True) and not ctx.late() else []
    out += _refusals(ctx)
    if not st["classes"]:
        if not st["tried"] and st["cut"]:
            out.append(ctx.finding("P000", f"shape fuzzing stopped at the end of the probe's budget before its first "
                                           f"size ({len(st['sizes'])} planned): a larger --budget gives it the time",
                                   severity=INFO))
        elif not st["tried"]:
            out.append(ctx.finding("P000", "no sizes to fuzz (no integer sizes)", severity=INFO))
        return out
    out[:0] = report_classes(ctx, st, st["classes"])
    st["reported"].update(st["classes"])
    return out


def _trials(ctx: Context) -> int:
    """The seeded mixes of a plan, and of each later turn: ``--fuzz-trials``, else ``DEFAULT_TRIALS``."""
    return int(ctx.options.get("fuzz_trials") or DEFAULT_TRIALS)


def _plan(ctx: Context) -> dict:
    """Shape fuzzing's state: the sizes planned, how many were tried, what each gave, the classes found."""
    t = ctx.target
    trials = _trials(ctx)
    blocks = ctx.options.get("blocks") or source.blocks(ctx)
    pins = pinned_names(ctx)
    edges = launcher_thresholds(ctx)
    sizes_list = fuzz.plan(t.sizes, blocks, t.ranges, ctx.seed, trials, thresholds=edges, pins=pins,
                           largest=ctx.backend == "gpu", values=value_sizes(ctx))
    base = {**t.sizes, **fuzz.pinned(t.sizes, t.ranges, pins)}
    memo = {}
    # the launcher's thresholds and the index limits are tried however many programs they take
    # (as they may pass the volume cap): the path or the wrap they reach shows nowhere else
    memo.setdefault("programs", {})["exempt"] = lambda s: bool(_crossed(s, base, edges)) or any(
        v in fuzz.edges(k, edges, t.ranges) for k, v in s.items() if isinstance(v, int))
    return {"sizes": sizes_list, "tried": 0, "seconds": 0.0, "memo": memo, "classes": {}, "done": set(),
            "base": base, "edges": edges, "blocks": blocks, "pins": pins, "cut": False,
            "reported": set()}  # the classes a finding reported (or, shrunk, found one already reported)


def try_sizes(ctx: Context, st: dict) -> None:
    """The planned sizes from where ``st`` stopped, until they run out, fuzzing's own time is spent
    (``budget.FUZZ_S``, counting earlier turns) or the probe says wrap up (``st["cut"]``: sizes left)."""
    t0, sizes_list = ctx.budget.now() - st["seconds"], st["sizes"]
    st["cut"] = False
    try:
        while st["tried"] < len(sizes_list) or _more(ctx, st, t0):
            if st["tried"] and ctx.budget.now() - t0 > FUZZ_S[ctx.backend]:
                break
            # the first size starts whatever the time (the budget's end still stops it: worker.run_one),
            # unless it would tune again past the budget's end
            if (st["tried"] or ctx.budget.ends is not None and ctx.budget.run_cost()) and ctx.late():
                st["cut"] = True
                break
            sizes = sizes_list[st["tried"]]
            st["tried"] += 1
            if (got := _memo(ctx, st["memo"], sizes)) is not None:
                key = (got[0], _crossed(sizes, st["base"], st["edges"]))
                st["classes"].setdefault(key, (sizes, got[1], st["tried"]))
                ctx.board.wrong_now = True  # the probe's budget now keeps the diagnosis its time
    finally:  # also where the budget's end stopped a size: the report says how far fuzzing got
        st["seconds"] = ctx.budget.now() - t0
        ctx.board.fuzz = {"tried": st["tried"], "compared": ctx.board.compared or 0,
                          "planned": len(sizes_list), "seconds": round(st["seconds"], 1),
                            "last": dict(sizes_list[st["tried"] - 1]) if st["tried"] else None}


def _more(ctx: Context, st: dict, t0: float) -> bool:
    """Whether more sizes were drawn (``fuzz.more``) into ``st["sizes"]``: the plan ran out with fuzzing's own time
    (``FUZZ_S``) left, the probe's budget not at its end, no failure met yet and fewer than ``MORE_TURNS`` turns
    drawn. A kernel found wrong has its finding; the rest of the time is the diagnosis's."""
    if not st["sizes"] or st["classes"] or st.get("turns", 0) >= MORE_TURNS or ctx.late():
        return False  # (a plan of no sizes: no integer size to mix)
    if ctx.budget.now() - t0 > FUZZ_S[ctx.backend] / 2:  # a turn costs about what the plan did: none past half
        return False
    st["turns"] = st.get("turns", 0) + 1
    t = ctx.target
    got = fuzz.more(t.sizes, st["blocks"], t.ranges, ctx.seed, _trials(ctx), st["turns"], pins=st["pins"],
                    seen=st["sizes"])
    st["sizes"].extend(got)
    return bool(got)


def report_classes(ctx: Context, st: dict, classes: dict) -> list:
    """``classes`` shrunk, one P401 each, none that ``st`` reported already (``st["done"]``)."""
    t, base, edges = ctx.target, st["base"], st["edges"]
    pools = {k: [v for v in pool if v > 0] for k, pool in
             fuzz.pools_for(base, st["blocks"], t.ranges, st["pins"], edges).items() if base[k] > 0}
    found = _shrink_classes(ctx, classes, st["memo"], pools, base, edges, st["done"])
    return [_p401(ctx, kind, best, first, n, runs, why) for kind, best, first, n, runs, why in found]


def value_sizes(ctx: Context) -> set:
    """The integer sizes that shape no tensor of ``make_inputs`` (a scale, a flag): one more than the
    default gives every tensor the same shape. A size whose next value make_inputs refuses is not one."""
    import torch

    def shapes(sizes):
        return {k: tuple(v.shape) for k, v in X.make(ctx.target, sizes, ctx.seed, ctx.backend).items()
                if isinstance(v, torch.Tensor)}

    base, out = ctx.target.sizes, set()
    try:
        at = shapes(base)
    except Exception:  # noqa: BLE001  make_inputs fails at the defaults (the reference says so): no values
        return out
    for k, v in base.items():
        if isinstance(v, int) and not isinstance(v, bool):
            try:
                if shapes({**base, k: v + 1}) == at:
                    out.add(k)
            except Exception:  # noqa: BLE001  make_inputs refuses the value: treat it as a size
                pass
    return out


def launcher_thresholds(ctx: Context) -> dict:
    """The thresholds of the launcher's branches, by size keyword ({} when its source cannot be read)."""
    from harness.probe import branches

    t = ctx.target
    try:
        found = branches.thresholds(t.launcher)
        if not found:
            return {}
        inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    except Exception:  # noqa: BLE001  no source, or make_inputs refuses the defaults: no thresholds
        return {}
    return {k: v for k, v in branches.to_sizes(found, inputs, t.sizes).items() if k in int_sizes(t.sizes)}


PROGRAMS_FACTOR = 8  # a size whose launches run more programs than this many times the defaults' is not tried


def programs(ctx: Context, sizes: dict) -> int | None:
    """The programs the launcher's kernels run at ``sizes`` (each kernel's latest launch: not
    autotune's benchmarking launches before it), counted in a dry run (grids only, no program run),
    or None where they cannot be counted (make_inputs refuses the sizes, the launcher raises, a GPU)."""
    from harness.run.worker import call_with

    if ctx.backend != "interpreter":
        return None
    try:
        inputs = X.make(ctx.target, sizes, ctx.seed, ctx.backend)
        with ctx.instrument(dry_run=True) as rec:
            call_with(ctx.target.launcher, inputs)
    except Exception:  # noqa: BLE001  the run itself will say what is wrong
        return None
    return sum(rec.programs.values()) or None


def too_many_programs(ctx: Context, sizes: dict, limits: dict) -> bool:
    """Whether ``sizes`` would run more than ``PROGRAMS_FACTOR`` times the programs of the defaults:
    under the interpreter a run costs about its programs, and one size with a block made tiny
    (chunk_size=1: 256 chunks where the defaults have 2) takes the whole budget. ``limits`` holds
    the defaults' count (computed once) and the counts seen."""
    if "default" not in limits:
        limits["default"] = programs(ctx, ctx.target.sizes)
    if not limits["default"] or limits.get("exempt", lambda _s: False)(sizes):
        return False
    key = tuple(sorted(sizes.items()))
    if key not in limits:
        limits[key] = programs(ctx, sizes)
    return limits[key] is not None and limits[key] > PROGRAMS_FACTOR * max(limits["default"], 1)


def _memo(ctx: Context, memo: dict, sizes: dict):
    key = tuple(sorted(sizes.items()))
    if key not in memo:
        limits = memo.setdefault("programs", {})
        memo[key] = None if too_many_programs(ctx, sizes, limits) else fail(ctx, sizes)
    return memo[key]


def _crossed(sizes: dict, base: dict, edges: dict) -> frozenset:
    """The thresholds that ``sizes`` lie across from the defaults (a launcher's other path)."""
    return frozenset((k, th) for k, ts in edges.items() for th in ts
                     if k in sizes and (sizes[k] >= th) != (base[k] >= th))


def _shrink_classes(ctx: Context, classes: dict, memo: dict, pools: dict, base: dict, edges: dict,
                    done: set) -> list:
    """Each class shrunk within itself (same kind, same side of each threshold). A class across
    thresholds keeps only those that matter: a threshold whose crossing back still fails the same
    way is dropped from it, and a class that is then one already reported (the same kind on the
    defaults' side, typically) is the same mechanism, not another finding."""
    found = []
    share = SHRINK_S[ctx.backend] / len(classes)
    for (kind, crossed), (first, why, n) in sorted(classes.items(), key=lambda kv: len(kv[0][1])):
        def same(s, kind=kind, crossed=crossed):
            if _crossed(s, base, edges) != crossed:  # another path of the launcher: not run
                return False
            got = _memo(ctx, memo, s)
            return got is not None and got[0] == kind

        side = {k: [v for v in pool if _crossed({**first, k: v}, base, edges) == crossed] for k, pool in pools.items()}
        best, runs = fuzz.shrink(first, same, side,
                                 deadline=min(ctx.budget.now() + share, ctx.wrap_up_by()), now=ctx.budget.now)
        needed = _needed(ctx, memo, kind, best, base, crossed) if crossed else crossed
        if (kind, needed) in done:
            continue
        done.add((kind, needed))
        got = memo.get(tuple(sorted(best.items())))
        found.append((kind, best, first, n, runs, got[1] if got else why))
    return found


def _needed(ctx, memo, kind, best: dict, base: dict, crossed) -> frozenset:
    """The thresholds of ``crossed`` that the failure needs: crossing one back (one after another)
    and still failing the same way shows it does not."""
    now, need = dict(best), set(crossed)
    for k, th in sorted(crossed):
        back = {**now, k: th - 1 if base[k] < th else th}
        if back[k] > 0 and (got := _memo(ctx, memo, back)) is not None and got[0] == kind:
            now, need = back, need - {(k, th)}
    return frozenset(need)


def _p401(ctx: Context, kind: str, best: dict, first: dict, n: int, runs: int | None, why: str):
    """One failure class's finding; ``runs`` None: not shrunk (the probe's budget ended first)."""
    defect = KINDS.get(kind, "")
    # where each failure was first met, before shrinking: a flaky one (a race) may show only there
    ctx.board.found_at = [*(ctx.board.found_at or []), dict(first)]
    how = "not shrunk: the probe's budget ended" if runs is None else f"shrunk in {runs} runs"
    what = "failing sizes" if runs is None else "smallest failing sizes"
    if _empty_there(ctx, best):
        what = f"{what} ({EMPTY_THERE})"
    return ctx.finding("P401", f"{kind}: {what} {_fmt(best)} (seed {ctx.seed}; found at "
                               f"{_fmt(first)} after {n} sizes, {how}): {why}"[:400],
                       defect=defect, sizes=dict(best))


def _empty_there(ctx: Context, sizes: dict) -> bool:
    """Whether make_inputs at ``sizes`` gives a tensor with no element (a size of 0 that is a tensor's dim, not an
    axis or a switch at 0): the diagnosis's evidence "empty" (``diagnosis.EMPTY_THERE``)."""
    import torch

    if 0 not in sizes.values():
        return False
    try:
        inputs = X.make(ctx.target, sizes, ctx.seed, ctx.backend)
    except Exception:  # noqa: BLE001  make_inputs declined them: nothing to say
        return False
    return any(isinstance(v, torch.Tensor) and v.numel() == 0 for v in inputs.values())


P401 = Code("P401", ERROR, "wrong at other sizes (shape fuzzing): the smallest failing sizes, shrunk one size at a "
                           "time", ("add-missing-mask", "causal-mask-wrong-corner"),
            otherwise="info where the sizes could not be run")
P402 = Code("P402", ERROR, "an empty input (a size 0) mishandled", ("empty-input", "atomic-accumulator-empty"),
            otherwise="info where the launcher refuses a size 0")
P405 = Code("P405", INFO, "the launcher or Triton raised at a fuzzed size: the launcher's domain, said once at the "
                          "smallest sizes")

DETECTOR = Detector("shapes", "seeded shape fuzzing, shrunk to the smallest failure; grids at the GPU's sizes", shapes,
                    process={"interpreter": 0, "gpu": 0}, rank=7, partial=partial,
                    codes=(P203, P204, P401, P402, P405))  # P203, P204: the runner's, from its failures
