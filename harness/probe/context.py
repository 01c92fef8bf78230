"""What every probe detector and diagnosis experiment is given: the ``Context`` of one worker
process (the user's file loaded, the backend, the seed, the options), and the helpers they
share to turn what a call did into a ``Finding``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from harness.probe.blackboard import Blackboard
from harness.probe.budget import Budget
from harness.probe.execute import PAD, Watch
from harness.probe.findings import ERROR, Finding


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
    budget: Budget = field(default_factory=Budget)  # the probe's time in this process (its deadlines, its timer)
    watch: Watch | None = None  # the worker's marks around each call, and its tuning clock (execute.Watch)
    refused: list = field(default_factory=list)  # (sizes, why) where Triton would not compile the kernel
    board: Blackboard = field(default_factory=Blackboard)  # what the runs showed (skips, the diagnosis, the parent)
    pad: int = PAD  # guard elements on each side of every tensor (0 under a GPU tool: it checks accesses itself)
    failed: list = field(default_factory=list)  # the analyses' own failures in this detector's runs (its P000 notes)

    def call(self, inputs: dict, **kw):
        """One call of the launcher on ``inputs`` (``execute.call``) on this run's backend, with its guard bands."""
        from harness.probe import execute

        return execute.call(self.target, inputs, backend=self.backend, pad=self.pad, watch=self.watch, **kw)

    def finding(self, code: str, message: str, **kw) -> Finding:
        return Finding(code, self.name, self.backend, message, **kw)

    def late(self) -> bool:
        """Past the detector's own deadline (a share of its timeout), or, once a result was seen
        wrong in this process (``board.failing``, or ``board.wrong_now`` while a detector
        works), into the time the probe's budget keeps for the diagnosis: wrap up with what there is
        (``Budget.late``)."""
        return self.budget.late(self.board.wrong())

    def wrap_up_by(self) -> float:
        """The clock time at which ``late()`` turns true as things stand (``Budget.wrap_up_by``)."""
        return self.budget.wrap_up_by(self.board.wrong())

    @contextlib.contextmanager
    def instrument(self, **kw):
        """The instrumented interpreter; yields its Recorder. On a GPU yields None, with only the
        analyses' hooks that hold on every backend (``interp_instrument.hooked``: ``fresh_tuning``)."""
        from harness.run.interp_instrument import Options, hooked, instrumented

        opts = {"tf32": self.options.get("tf32", True), "poison_masked": self.options.get("poison_masked", True)}
        if self.backend != "interpreter":
            with hooked(Options(**{**opts, **kw})):
                yield None
            return
        with instrumented(Options(**{**opts, **kw})) as rec:
            yield rec
        self.failed += [f for f in rec.failed if f not in self.failed]
        for name, values in rec.blocks.items():
            self.blocks = sorted(set(self.blocks) | set(values))
        if rec.float_atomics or getattr(rec, "atomics", 0):
            self.board.atomics = True


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
    if (where := own_failure(e)) is not None:
        from harness.probe.findings import INFO

        root = _root_cause(e)
        return ctx.finding("P000", f"the probe's own analysis raised{at} ({where}): {error_line(root)} (information: "
                                   f"not a finding about the kernel; that launch's answer is missing)"[:300],
                           severity=INFO)
    return ctx.finding("P001", f"the launcher raised{at}: {error_line(e)}"[:300], line=error_where(e))


def _root_cause(e: BaseException) -> BaseException:
    """The exception at the bottom of ``e``'s ``raise ... from`` chain (the interpreter wraps what a program
    raised in its own error)."""
    seen = set()
    while e.__cause__ is not None and id(e) not in seen:
        seen.add(id(e))
        e = e.__cause__
    return e


def own_failure(e: BaseException) -> str | None:
    """file:line where the probe's own instrumentation raised ``e`` (its root cause), else None: the innermost frame
    of the root cause's traceback outside NumPy and torch lies in the instrumented interpreter or one of its
    analyses (``harness/run/interp_instrument.py``, ``harness/run/analyses/``). An error of the kernel or the
    launcher has its innermost such frame in their code or in Triton's (which runs the kernel's operations),
    never in ours; a deliberate refusal of ours (a grid past CUDA's limits) is judged before this."""
    import os
    import traceback

    import numpy
    import torch

    root = _root_cause(e)
    libs = (os.path.dirname(numpy.__file__), os.path.dirname(torch.__file__))
    frames = [f for f in traceback.extract_tb(root.__traceback__) if not f.filename.startswith(libs)]
    if not frames:
        return None
    run = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "run")
    ours = (os.path.join(run, "analyses") + os.sep, os.path.join(run, "interp_instrument.py"))
    last = frames[-1]
    if not os.path.abspath(last.filename).startswith(ours):
        return None
    return f"{os.path.relpath(last.filename, os.path.dirname(os.path.dirname(run)))}:{last.lineno}"


def told_own_failure(ctx: "Context", e: BaseException | None) -> bool:
    """Whether ``e`` is the probe's own failure (``own_failure``); if so it is noted in ``ctx.failed`` (a P000 note
    at the detector's end, ``harness.probe.worker``), never read as the kernel's: an experiment's run, a fuzzed
    size or a check whose launch raised inside our instrumentation tells nothing about the kernel."""
    if e is None or (where := own_failure(e)) is None:
        return False
    from harness.errors import error_line

    what = f"analysis raised at {where}: {error_line(_root_cause(e))}"[:200]
    if what not in ctx.failed:
        ctx.failed.append(what)
    return True


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


# what a kernel's own fault looks like when it surfaces as an exception: an access outside memory
# (CUDA's sticky errors), a device-side assert, a grid CUDA refuses (the instrumented interpreter's)
DEVICE_FAULTS = ("illegal memory access", "illegal address", "misaligned address", "unspecified launch failure",
                 "device-side assert", "illegal instruction")


def cuda_usable() -> bool:
    """False when the CUDA context is broken (a sticky error: an illegal address, a device-side assert): every
    later launch of the process then raises the same error, whatever it runs."""
    import torch

    try:
        torch.cuda.synchronize()
        torch.ones(1, device="cuda").add_(1).item()
        return True
    except Exception:  # noqa: BLE001
        return False


def device_fault(e: BaseException) -> bool:
    """Whether ``e`` is the kernel's own fault (an access outside memory, a grid past CUDA's limits),
    an error at any size, rather than the launcher or Triton declining the sizes with an exception."""
    if grid_limit_hit(e) is not None:
        return True
    for _ in range(10):  # e and the exceptions it came from (the launcher may wrap a CUDA error)
        if e is None:
            return False
        if any(m in str(e).lower() for m in DEVICE_FAULTS):
            return True
        e = e.__cause__ or e.__context__
    return False


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


def budget_stop(ctx: Context, left: str) -> Finding:
    """P000 (information): the detector stopped between its runs at the end of its share of the probe's budget
    (``Budget.begin_share``) or of the budget itself; ``left``: what is then not checked ("the layouts not yet
    tried"). Its status says so too (the "cut" event: "cut at the budget's end", as for one stopped in a run),
    where what keeps the statuses and not the notes (a bugs board's row) shows it."""
    from harness.probe.findings import INFO

    if ctx.emit is not None:
        ctx.emit(event="cut", detector=ctx.name)
    return ctx.finding("P000", f"{ctx.name} stopped at the end of its share of the probe's budget (--budget "
                               f"{ctx.options.get('budget', 0):g}s): {left} are not checked", severity=INFO)


def take_kept(ctx: Context, field: str) -> list:
    """The findings a detector kept on the board while it ran (``ctx.board.<field>``), taken off it: what it
    reports where the budget's end stopped it in a run (``Detector.partial``)."""
    found = getattr(ctx.board, field) or []
    setattr(ctx.board, field, None)
    return list(found)


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


def pinned_names(ctx: Context) -> set:
    """Sizes the user pinned with ``--sizes`` (``ctx.options["pinned"]``, or ``target.pinned`` where the
    worker sets it); a FUZZ int pins too (``fuzz.pinned`` reads it from the ranges)."""
    return set((getattr(ctx, "options", None) or {}).get("pinned") or ()) | set(getattr(ctx.target, "pinned", None) or ())


def fill_sentinel(v: float) -> bool:
    """A value outputs are filled with to say "none": -1, or one past any size (2**30 and up). A
    constant the kernel computes (an argmax that always picks the padded lane: its index) is not."""
    return v == -1 or abs(v) >= 2 ** 30


def fill_kept(out, ref, wrong, failing: dict) -> dict:
    """The wrong elements all one value other than 0 where the reference varies: a fill kept ({"fill-kept": what},
    the diagnosis's evidence; {} otherwise). ``out``, ``ref``: flat float64; ``wrong``: their wrong elements."""
    import torch

    from harness.probe.diagnosis import KEPT_FILL

    held, n = out[wrong], int(wrong.sum())
    if n >= 4 and bool(torch.isfinite(held).all()) and fill_sentinel(float(held[0])) and bool((held == held[0]).all()) \
            and int(torch.unique(ref[wrong]).numel()) > 1:
        return {"fill-kept": f"the {n} wrong elements all hold {float(held[0]):g} where the reference varies, at "
                             f"{fmt(failing)}: {KEPT_FILL}"}
    return {}
