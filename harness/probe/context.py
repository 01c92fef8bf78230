"""What every probe detector and diagnosis experiment is given: the ``Context`` of one worker
process (the user's file loaded, the backend, the seed, the options), and the helpers they
share to turn what a call did into a ``Finding``.
"""

from __future__ import annotations

import contextlib
import signal
import time
from dataclasses import dataclass, field

from harness.probe.execute import PAD
from harness.probe.findings import ERROR, Finding


class BudgetSpent(BaseException):
    """Raised at ``Context.stop`` (the worker's SIGALRM): the probe's budget ends while a detector
    still runs. Not an Exception: the user's ``except Exception`` must not swallow it."""


@dataclass
class Context:
    target: object
    backend: str
    seed: int
    name: str  # the detector or experiment running
    counter: object = None  # harness.run.triton_compat.TuningCounter
    options: dict = field(default_factory=dict)  # tf32, poison_masked, fuzz_trials, blocks, large
    emit: object = None
    blocks: list = field(default_factory=list)  # block sizes seen (constexprs)
    trying: dict | None = None  # the sizes being run (a timeout names them)
    deadline: float | None = None  # time.monotonic() by which a long detector wraps up
    ends: float | None = None  # time.monotonic() by which the whole probe wraps up (--budget), or None
    stop: float | None = None  # time.monotonic() at which a detector still running is stopped (BudgetSpent)
    reserve: float = 0.0  # seconds before ``ends`` left to the diagnosis once a result was seen wrong
    refused: list = field(default_factory=list)  # (sizes, why) where Triton would not compile the kernel
    seen: dict = field(default_factory=dict)  # what runs showed: atomics, autotune, poisoned loads (skips, diagnosis)
    outcomes: dict = field(default_factory=dict)  # the experiments' plain runs by sizes (harness.probe.experiments.outcome)
    later: dict = field(default_factory=dict)  # work a detector left for one after it (shape fuzzing's sizes: shapes-rest)
    pad: int = PAD  # guard elements on each side of every tensor (0 under a GPU tool: it checks accesses itself)

    def call(self, inputs: dict, **kw):
        """One call of the launcher on ``inputs`` (``execute.call``) on this run's backend, with its guard bands."""
        from harness.probe import execute

        return execute.call(self.target, inputs, backend=self.backend, pad=self.pad, **kw)

    def finding(self, code: str, message: str, **kw) -> Finding:
        return Finding(code, self.name, self.backend, message, **kw)

    def late(self) -> bool:
        """Past the detector's own deadline (a share of its timeout), or, once a result was seen
        wrong in this process (``seen["failing"]``, or ``seen["wrong_now"]`` while a detector
        works), into the time the probe's budget keeps for the diagnosis: wrap up with what there is."""
        return time.monotonic() > self.wrap_up_by()

    def wrap_up_by(self) -> float:
        """The time.monotonic() at which ``late()`` turns true as things stand (inf: never). Under
        a budget, a run is started only where it can end before the budget does (``run_cost``)."""
        t = self.deadline if self.deadline is not None else float("inf")
        if self.ends is not None and (self.seen.get("failing") or self.seen.get("wrong_now")):
            t = min(t, self.ends - self.reserve)
        if self.ends is not None:
            t = min(t, self.ends - self.run_cost())
        return t

    def run_cost(self) -> float:
        """Seconds a run at new sizes may take before any of its own work: an autotuned kernel
        tunes again at each new key (on a GPU, compiling and benchmarking every config: 6-10 s for
        gemlite's GEMV, where a run itself takes milliseconds), as long as its longest tuning in
        this process (``execute.longest_tuning``). 0 where nothing was tuned: other runs are short
        beside the time the budget keeps."""
        from harness.probe import execute

        return execute.longest_tuning()

    @contextlib.contextmanager
    def instrument(self, **kw):
        """The instrumented interpreter (a plain block on the GPU); yields its Recorder or None."""
        if self.backend != "interpreter":
            yield None
            return
        from harness.run.interp_instrument import Options, instrumented

        opts = {"tf32": self.options.get("tf32", True), "poison_masked": self.options.get("poison_masked", True)}
        with instrumented(Options(**{**opts, **kw})) as rec:
            yield rec
        for name, values in rec.blocks.items():
            self.blocks = sorted(set(self.blocks) | set(values))
        if rec.float_atomics or getattr(rec, "atomics", 0):
            self.seen["atomics"] = True


def crash(ctx: Context, e: BaseException, sizes: dict | None = None) -> Finding:
    """The launcher raised: P001, or P403 when the instrumented interpreter refused a grid past CUDA's
    limits, or P003 when Triton could not compile the kernel (its own message)."""
    from harness.errors import error_line

    at = f" at sizes {fmt(sizes)}" if sizes else ""
    if (hit := grid_limit_hit(e)) is not None:
        return grid_finding(ctx, hit, at)
    from harness.probe.execute import compile_error

    if (why := compile_error(e)) is not None:
        return ctx.finding("P003", f"Triton could not compile the kernel{at}: {why}"[:300], line=error_where(e))
    if over_memory_cap(e):
        from harness.probe.findings import INFO

        return ctx.finding("P001", f"the worker ran out of the address space the probe gives it{at} "
                                   f"(CASEBOOK_WORKER_MEMORY_GB): {error_line(e)} (information: not a finding "
                                   f"about the kernel)"[:300], severity=INFO)
    return ctx.finding("P001", f"the launcher raised{at}: {error_line(e)}"[:300], line=error_where(e))


def over_memory_cap(e: BaseException | None) -> bool:
    """A MemoryError (or the interpreter's error wrapping one) in a worker under the probe's own
    address-space limit (``harness.run.isolate.memory_limit_bytes``): the probe's limit was reached,
    which says nothing about the kernel."""
    import os

    if not os.environ.get("CASEBOOK_WORKER_RLIMIT_AS"):
        return False
    return any(isinstance(x, MemoryError) or "MemoryError" in f"{type(x).__name__}: {x}" for x in _causes(e))


def _causes(e: BaseException | None):
    """``e`` and the exceptions it came from (``__cause__``, else ``__context__``), ten at most."""
    for _ in range(10):
        if e is None:
            return
        yield e
        e = e.__cause__ or e.__context__


def grid_limit_hit(e: BaseException | None) -> dict | None:
    """The grid-limit record of ``e`` or of an exception it came from (the user may wrap it)."""
    return next((x.hit for x in _causes(e) if hasattr(x, "hit") and type(x).__name__ == "GridLimitError"), None)


def grid_finding(ctx: Context, hit: dict, at: str = "", severity: str = ERROR) -> Finding:
    axis = "x" if hit["axis"] == 0 else "yz"[hit["axis"] - 1]
    return ctx.finding("P403", f"{hit['kernel']}{at}: grid {hit['grid']} has {hit['programs']:,} programs on axis "
                               f"{hit['axis']} ({axis}); CUDA allows at most {hit['limit']:,} there, so the launch "
                               f"fails on a GPU (the interpreter would run it)", line=hit["line"],
                       kernel=hit["kernel"], severity=severity)


def error_where(e: BaseException) -> str:
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


def fmt(sizes: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def wrong(cmp: dict) -> str:
    return f"{cmp['result']} (reference {cmp['reference']}; max abs err {cmp['max_abs']:.3g})"


def label(name: str) -> str:
    return "a tensor the launcher allocated" if name == "?" else f"'{name}'"


def int_sizes(sizes: dict) -> dict:
    """The sizes that are whole numbers (not bools): the ones fuzzing and the experiments vary."""
    return {k: v for k, v in sizes.items() if isinstance(v, int) and not isinstance(v, bool)}


def poison_or_own(ctx: Context, inputs: dict, c) -> list:
    """NaN where the reference is finite: from the guard bands' poison (re-run with finite guards:
    the kernel read outside its tensors) or the kernel's own? P112 for the first, nothing for the second."""
    from harness.probe import execute as X

    with ctx.instrument(poison_masked=False):
        again = ctx.call(X.clone_inputs(inputs), finite=True)
    if again.error is None and again.cmp.get("nonfinite", 0) < c.cmp["nonfinite"]:
        return [ctx.finding("P112", f"{c.cmp['nonfinite']} non-finite result elements with NaN guard bands, "
                                    f"{again.cmp['nonfinite']} with finite ones: the kernel read outside its "
                                    f"tensors or read uninitialised memory")]
    return []


def never_written(ctx: Context, inputs: dict, first, ref=None) -> dict:
    """{name: count} of the elements the launcher allocated that still hold their fill after the
    call ``first`` and after a second call whose allocations get another fill
    (``execute.second_fill``): an element the kernel wrote that happens to equal the poison (255
    in a uint8 output, a NaN carried from the poison) is not counted."""
    from harness.probe import execute as X

    if not first.guard.get("unwritten"):
        return {}
    with ctx.instrument(poison_masked=False):
        second = ctx.call(X.clone_inputs(inputs), ref=ref, canary=X.second_fill)
    if second.error is not None or len(second.kept) != len(first.kept):
        return {}
    out = {}
    for (name, a), (_, b) in zip(first.kept, second.kept):
        if a.shape == b.shape and (n := int((a & b).sum())):
            out[name] = out.get(name, 0) + n
    return out


class _Late(BaseException):
    """The detector's own deadline passed during a run it chose to make (not the kernel's hang)."""


@contextlib.contextmanager
def until_deadline(ctx, budget: float | None = None):
    """Stop the block at the detector's deadline (``ctx.deadline``) or after ``budget`` seconds,
    whichever comes first, quietly: a larger size re-tunes an autotuned kernel and runs it 8 times
    as long, which no estimate from the defaults' runs foresees. The worker's own limit (its
    SIGALRM timer: a hang, P002) is put back after, less the time spent; where it comes first it
    stays in charge."""
    ends = [x for x in (ctx.deadline, None if budget is None else time.monotonic() + budget) if x is not None]
    left = min(ends) - time.monotonic() if ends else None
    outer, _ = signal.getitimer(signal.ITIMER_REAL)
    if left is None or left <= 0 or (outer and outer <= left):
        yield
        return

    def late(signum, frame):
        raise _Late

    handler, t0 = signal.signal(signal.SIGALRM, late), time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, left)
    try:
        yield
    except _Late:
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, handler)
        if outer:
            signal.setitimer(signal.ITIMER_REAL, max(0.01, outer - (time.monotonic() - t0)))
