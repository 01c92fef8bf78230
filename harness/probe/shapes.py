"""The shape-fuzzing detector (in the worker): seeded sizes around the defaults, each run
with guard bands against the reference, a failure shrunk to the smallest failing sizes.

Each size tried is announced on the events file before it runs, so a hang or a crash
of the whole process still names the sizes that caused it.
"""

from __future__ import annotations

import time

from harness.probe import execute as X
from harness.probe import fuzz
from harness.probe.checks import Context, _crash, _fmt, _label, _wrong
from harness.probe.findings import INFO

DEFAULT_TRIALS = 24
TIME_BUDGET_S = 30.0  # fuzzing stops starting new sizes after this long (shrinking has its own budget)
SHRINK_BUDGET_S = 20.0


def why_fails(ctx: Context, sizes: dict) -> str | None:
    """Why the kernel fails at ``sizes`` (a short reason), or None when it passes or the sizes are refused."""
    t = ctx.target
    ctx.trying = sizes
    if ctx.emit is not None:
        ctx.emit(event="trying", sizes=sizes)
    try:
        inputs = X.make(t, sizes, ctx.seed, ctx.backend)
        ref = X.reference(t, inputs)
    except Exception:  # noqa: BLE001  make_inputs or the reference refuses these sizes: not the kernel's fault
        return None
    with ctx.instrument():
        c = X.call(t, inputs, backend=ctx.backend, ref=ref)
    if c.error is not None:
        from harness.errors import error_line

        return f"raised {error_line(c.error)}"
    if past := c.guard.get("wrote_past_end"):
        return f"wrote outside {', '.join(_label(n) for n in past)}"
    if unwritten := c.guard.get("unwritten"):
        return f"left {sum(unwritten.values())} elements of a result never written"
    if not c.cmp["close"]:
        kept = X.unwritten_in_place(t, inputs, c.returned) if c.returned else 0
        return f"left {kept} elements of '{c.returned}' never written" if kept else _wrong(c.cmp)
    return None


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
        with ctx.instrument():
            c = X.call(ctx.target, inputs, backend=ctx.backend, ref=ref)
        if c.error is not None:  # refused: information (the kernel need not accept empty input)
            out.append(_crash(ctx, c.error, sizes))
            out[-1].code, out[-1].severity = "P402", INFO
            out[-1].message = f"does not accept {k}=0 (information: {out[-1].message})"[:300]
        elif not c.cmp["close"] and c.out.shape != c.ref.shape:  # the reference disagrees on the shape
            out.append(ctx.finding("P402", f"at {_fmt(sizes)} the result has shape {tuple(c.out.shape)} and the "
                                           f"reference {tuple(c.ref.shape)} (information)", severity=INFO))
        elif not c.cmp["close"]:
            out.append(ctx.finding("P402", f"at {_fmt(sizes)}: {_wrong(c.cmp)}"))
    return out


def _late(ctx: Context) -> bool:
    """Past the detector's own deadline (a share of its timeout): wrap up with what there is."""
    return ctx.deadline is not None and time.monotonic() > ctx.deadline


def shapes(ctx: Context) -> list:
    """Seeded sizes around the defaults; the first failure shrunk to the smallest failing sizes."""
    t = ctx.target
    trials = int(ctx.options.get("fuzz_trials") or DEFAULT_TRIALS)
    blocks = ctx.options.get("blocks") or ctx.blocks
    sizes_list = fuzz.plan(t.sizes, blocks, t.ranges, ctx.seed, trials)
    t0, tried, failing = time.monotonic(), 0, None
    for sizes in sizes_list:
        if tried and (time.monotonic() - t0 > TIME_BUDGET_S or _late(ctx)):
            break
        tried += 1
        if (why := why_fails(ctx, sizes)) is not None:
            failing = (sizes, why)
            break
    out = _empty(ctx) if ctx.options.get("empty", True) and not _late(ctx) else []
    if failing is None:
        if not tried:
            out.append(ctx.finding("P000", "no sizes to fuzz (no integer sizes)", severity=INFO))
        return out
    pools = {k: fuzz.candidates(v, blocks, *t.ranges.get(k, (None, None))) for k, v in t.sizes.items()
             if isinstance(v, int) and not isinstance(v, bool) and v > 0}
    reasons = {}

    def fails(s):
        reasons[tuple(sorted(s.items()))] = why_fails(ctx, s)
        return reasons[tuple(sorted(s.items()))] is not None

    best, runs = fuzz.shrink(failing[0], fails, pools,
                             deadline=min(time.monotonic() + SHRINK_BUDGET_S, ctx.deadline or float("inf")))
    why = reasons.get(tuple(sorted(best.items())), failing[1])
    defect = "out-of-bounds-write" if why.startswith("wrote outside") else \
        "unwritten-output" if "never written" in why else ""
    out.insert(0, ctx.finding("P401", f"smallest failing sizes {_fmt(best)} (seed {ctx.seed}; found at "
                                      f"{_fmt(failing[0])} after {tried} sizes, shrunk in {runs} runs): {why}",
                              defect=defect))
    return out
