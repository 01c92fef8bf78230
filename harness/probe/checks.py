"""The probe's detectors, as they run inside the worker process (``harness.probe.worker``).

Each takes a ``Context`` and returns a list of ``Finding``. They run the user's kernel
through ``harness.probe.execute``; under the interpreter, inside
``harness.run.interp_instrument.instrumented`` (TF32 rounding and poisoned masked lanes
on by default, memory checking and race recording where the detector asks).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from harness.probe import execute as X
from harness.probe.findings import ERROR, INFO, Finding

ORDERS = ("reverse", 1, 2, 3, 4)
SCALE_FOR_ORDER = 8  # sizes multiplied by this when float atomics agree in every order at the defaults


@dataclass
class Context:
    target: object
    backend: str
    seed: int
    name: str  # the detector
    counter: object = None  # harness.run.triton_compat.TuningCounter
    options: dict = field(default_factory=dict)  # tf32, poison_masked, fuzz_trials
    emit: object = None
    blocks: list = field(default_factory=list)  # block sizes seen (constexprs)
    trying: dict | None = None  # the sizes being run (a timeout names them)
    deadline: float | None = None  # time.monotonic() by which a long detector wraps up
    refused: list = field(default_factory=list)  # (sizes, why) where Triton would not compile the kernel

    def finding(self, code: str, message: str, **kw) -> Finding:
        return Finding(code, self.name, self.backend, message, **kw)

    @contextlib.contextmanager
    def instrument(self, **kw):
        """The instrumented interpreter (a plain block on the GPU); yields its Recorder or None."""
        if self.backend != "interpreter":
            yield None
            return
        from harness.run.interp_instrument import Options, instrumented

        opts = Options(tf32=self.options.get("tf32", True), poison_masked=self.options.get("poison_masked", True))
        for k, v in kw.items():
            setattr(opts, k, v)
        with instrumented(opts) as rec:
            yield rec
        for name, values in rec.blocks.items():
            self.blocks = sorted(set(self.blocks) | set(values))


def _crash(ctx: Context, e: BaseException, sizes: dict | None = None) -> Finding:
    """The launcher raised: P001, or P403 when the instrumented interpreter refused a grid past CUDA's limits."""
    from harness.errors import error_line

    at = f" at sizes {_fmt(sizes)}" if sizes else ""
    if (hit := grid_limit_hit(e)) is not None:
        return grid_finding(ctx, hit, at)
    return ctx.finding("P001", f"the launcher raised{at}: {error_line(e)}"[:300], line=_error_line(e))


def grid_limit_hit(e: BaseException | None) -> dict | None:
    """The grid-limit record of ``e`` or of an exception it came from (the user may wrap it)."""
    seen = 0
    while e is not None and seen < 10:
        if hasattr(e, "hit") and type(e).__name__ == "GridLimitError":
            return e.hit
        e, seen = e.__cause__ or e.__context__, seen + 1
    return None


def grid_finding(ctx: Context, hit: dict, at: str = "", severity: str = ERROR) -> Finding:
    axis = "x" if hit["axis"] == 0 else "yz"[hit["axis"] - 1]
    return ctx.finding("P403", f"{hit['kernel']}{at}: grid {hit['grid']} has {hit['programs']:,} programs on axis "
                               f"{hit['axis']} ({axis}); CUDA allows at most {hit['limit']:,} there, so the launch "
                               f"fails on a GPU (the interpreter would run it)", line=hit["line"],
                       kernel=hit["kernel"], severity=severity)


def _error_line(e: BaseException) -> str:
    """file:line of the innermost frame of the user's code in the traceback, where there is one."""
    import os
    import traceback

    import triton

    skip = (os.path.dirname(triton.__file__), os.path.dirname(os.path.dirname(__file__)))
    frames = [f for f in traceback.extract_tb(e.__traceback__) if not f.filename.startswith(skip)]
    cause = e.__cause__
    while cause is not None:
        frames += [f for f in traceback.extract_tb(cause.__traceback__) if not f.filename.startswith(skip)]
        cause = cause.__cause__
    return f"{os.path.relpath(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""


def _fmt(sizes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def _wrong(cmp: dict) -> str:
    return f"{cmp['result']} (reference {cmp['reference']}; max abs err {cmp['max_abs']:.3g})"


def reference(ctx: Context) -> list[Finding]:
    """The default sizes against the float64 reference; a mismatch is attributed to TF32
    rounding or to poisoned masked lanes when turning that one emulation off clears it."""
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)
    with ctx.instrument() as rec:
        c = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, ref=ref)
    if c.error is not None:
        return [_crash(ctx, c.error, t.sizes)]
    out = []
    if c.cmp["close"]:
        return out
    for opt, code, what in (("tf32", "P204", "tl.dot rounded like TF32 (fp32 operands, default input_precision)"),
                            ("poison_masked", "P203", "masked lanes of a tl.load without other= hold poison")):
        used = rec is not None and (rec.tf32_dots if opt == "tf32" else rec.poisoned_loads)
        if not used:
            continue
        from harness.run.triton_compat import reset_autotune_caches

        reset_autotune_caches(t.kernel)  # a first call again, as the one it is compared with
        with ctx.instrument(**{opt: False}):
            again = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, ref=ref)
        if again.error is None and again.cmp["close"]:
            line = ", ".join(rec.poison_lines) if opt == "poison_masked" else ", ".join(rec.dot_lines)
            msg = f"with {what}: {_wrong(c.cmp)}; without it the result matches"
            out.append(ctx.finding(code, msg, line=line))
            return out
    if c.cmp["nonfinite"] and (poison := _poison_or_own(ctx, inputs, c)):
        out += poison
    elif c.cmp["nonfinite"]:
        out.append(ctx.finding("P202", f"{c.cmp['nonfinite']} non-finite elements where the reference is finite: "
                                       f"{_wrong(c.cmp)}"))
    else:
        hint = f" (masked tl.load without other= at {', '.join(rec.poison_lines)})" \
            if rec is not None and rec.poison_lines else ""
        out.append(ctx.finding("P201", f"at {_fmt(t.sizes)}: {_wrong(c.cmp)}{hint}"))
    return out


def guard_bands(ctx: Context) -> list[Finding]:
    """Guard bands around every tensor, poison in the launcher's own allocations."""
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    with ctx.instrument():
        c = X.call(t, X.clone_inputs(inputs), backend=ctx.backend)
    if c.error is not None:
        return [_crash(ctx, c.error, t.sizes)]
    out = []
    for name, n in c.guard.get("wrote_past_end", {}).items():
        out.append(ctx.finding("P111", f"{n} guard elements around {_label(name)} changed: "
                                       f"the kernel wrote outside the tensor"))
    for name, n in c.guard.get("unwritten", {}).items():
        out.append(ctx.finding("P113", f"{n} elements of {_label(name)} (allocated by the launcher) never written"))
    if c.returned and not c.cmp["close"]:
        with ctx.instrument():
            kept = X.unwritten_in_place(t, inputs, c.returned)
        if kept:
            out.append(ctx.finding("P113", f"{kept} elements of '{c.returned}' (the result) keep whatever they "
                                           f"held before the launch: never written"))
    if c.cmp.get("nonfinite") and not out:
        out += _poison_or_own(ctx, inputs, c)
    return out


def _label(name: str) -> str:
    return "a tensor the launcher allocated" if name == "?" else f"'{name}'"


def _poison_or_own(ctx: Context, inputs: dict, c) -> list[Finding]:
    """NaN where the reference is finite: from the poison (re-run with finite guards) or the kernel's own?"""
    t = ctx.target
    with ctx.instrument(poison_masked=False):
        again = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, finite=True)
    if again.error is None and again.cmp.get("nonfinite", 0) < c.cmp["nonfinite"]:
        return [ctx.finding("P112", f"{c.cmp['nonfinite']} non-finite result elements with NaN guard bands, "
                                    f"{again.cmp['nonfinite']} with finite ones: the kernel read outside its "
                                    f"tensors or read uninitialised memory")]
    return []


def memcheck(ctx: Context) -> list[Finding]:
    """Every load, store and atomic checked against its tensor's bounds (interpreter)."""
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    with ctx.instrument(memcheck=True) as rec:
        c = X.call(t, inputs, backend=ctx.backend)
    out = []
    codes = {"store": "P101", "load": "P102", "atomic": "P103"}
    for (kind, tensor, side, line), hit in sorted(rec.oob.items(), key=lambda kv: kv[0][3]):
        out.append(ctx.finding(codes[kind], f"{hit['kernel']}: {kind} {side} of '{tensor}' by up to "
                                            f"{hit['elements']} elements ({hit['lanes']} lanes; first by program "
                                            f"{hit['pid']})", line=line, kernel=hit["kernel"], programs=[hit["pid"]]))
    if c.error is not None:
        out.append(_crash(ctx, c.error, t.sizes))
    return out


def race(ctx: Context) -> list[Finding]:
    """Plain stores to an address another program of the launch also touches (interpreter)."""
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    with ctx.instrument(race=True) as rec:
        c = X.call(t, inputs, backend=ctx.backend)
    out, seen = [], set()
    for r in rec.races:
        key = (r["kernel"], r["store_line"], r["other_line"])
        if key in seen:
            continue
        seen.add(key)
        out.append(ctx.finding(
            "P301", f"{r['kernel']}: programs {r['store_pid']} and {r['other_pid']} both access {r['address']}: "
                    f"a store at {r['store_line']}, a {r['other_kind']} at {r['other_line']} "
                    f"({r['addresses']} such addresses)", line=r["store_line"], kernel=r["kernel"],
            programs=[r["store_pid"], r["other_pid"]]))
    if rec.truncated:
        out.append(ctx.finding("P000", "race detector stopped recording: too many accesses in one launch",
                               severity=INFO))
    if c.error is not None:
        out.append(_crash(ctx, c.error, t.sizes))
    return out


def _orders_differ(ctx: Context, sizes: dict) -> tuple[str | None, object]:
    t = ctx.target
    inputs = X.make(t, sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)
    from harness.core.compare import fingerprint

    with ctx.instrument(order="forward") as rec:
        X.call(t, X.clone_inputs(inputs), backend=ctx.backend, ref=ref)  # autotune tunes here, not below
        base = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, ref=ref)
    if base.error is not None:
        return None, base.error
    for order in ORDERS:
        with ctx.instrument(order=order):
            c = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, ref=ref)
        if c.error is None and fingerprint(c.out) != fingerprint(base.out):
            diff = float((c.out.double() - base.out.double()).abs().nan_to_num(float("inf")).max())
            close = base.cmp["close"] and c.cmp["close"]
            return (f"program order {order!r} against in order at {_fmt(sizes)}: results differ by up to "
                    f"{diff:.3g}{' (both within tolerance)' if close else ''}"), (rec, close)
    return None, rec


def order(ctx: Context) -> list[Finding]:
    """The grid run in program order, reversed and shuffled: a result that depends on it."""
    if ctx.backend != "interpreter":
        return []
    t = ctx.target
    msg, info = _orders_differ(ctx, t.sizes)
    if isinstance(info, BaseException):
        return [_crash(ctx, info, t.sizes)]
    rec = info[0] if msg else info
    if msg is None and rec.float_atomics:
        for k, v in t.sizes.items():
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                msg, info = _orders_differ(ctx, {**t.sizes, k: v * SCALE_FOR_ORDER})
                if msg or isinstance(info, BaseException):
                    break
    if not msg or isinstance(info, BaseException):
        return []
    rec, close = info
    if rec.float_atomics and close:
        sev = ERROR if t.deterministic else INFO
        note = "" if t.deterministic else " (declared DETERMINISTIC = False: information)"
        return [ctx.finding("P303", f"float atomics: {msg}{note}", severity=sev)]
    return [ctx.finding("P302", msg)]


def repeat(ctx: Context, runs: int = 3) -> list[Finding]:
    """The same inputs, several runs: distinct results."""
    from harness.core.compare import fingerprint

    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)
    prints = set()
    for i in range(runs + 1):  # the first run only tunes (autotune): first-call compares that one
        with ctx.instrument():
            c = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, ref=ref)
        if c.error is not None:
            return [_crash(ctx, c.error, t.sizes)]
        if i:
            prints.add(fingerprint(c.out))
    if len(prints) > 1:
        sev = ERROR if t.deterministic else INFO
        return [ctx.finding("P501", f"{len(prints)} distinct results in {runs} identical runs", severity=sev)]
    return []


def first_call(ctx: Context) -> list[Finding]:
    """The first call (autotune tunes here) against the second, each on fresh copies of the inputs."""
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)
    calls = []
    for _ in range(2):
        with ctx.instrument():
            calls.append(X.call(t, X.clone_inputs(inputs), backend=ctx.backend, ref=ref,
                                counter=ctx.counter))
        if calls[-1].error is not None:
            return [_crash(ctx, calls[-1].error, t.sizes)]
    first, second = calls
    tuned = f"; autotune launched the kernel {first.bench_launches} times during the first call" \
        if first.bench_launches else ""
    if first.cmp["close"] == second.cmp["close"]:
        return []
    bad, good = ("first", "second") if not first.cmp["close"] else ("second", "first")
    wrong = first if bad == "first" else second
    return [ctx.finding("P502", f"the {bad} call is wrong and the {good} is right: {_wrong(wrong.cmp)}{tuned}")]
