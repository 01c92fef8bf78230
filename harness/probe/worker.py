"""Runs one probe detector on the user's file in the current process; ``runner`` starts it.

Usage (by the harness, not by people)::

    TRITON_INTERPRET=1 python -m harness.probe.worker '{"file": ..., "detectors": [...], ...}'

(a ``harness.probe.request.ProbeRequest`` as JSON).

The detectors named run one after another in this process (a process start costs more
than most detectors); ``start`` and ``end`` events bracket each, so when the process
dies or hangs, ``runner`` knows which detector it was in and runs the rest in a new one.

Events, one JSON object a line, appended to ``events`` as they happen:

- ``{"event": "meta", ...}``  a ``blackboard.Meta``: once loaded, what the file declares (sizes,
  deterministic, tolerance, ranges); after each detector, the block sizes seen and the blackboard
- ``{"event": "start" | "end", "detector": ...}``
- ``{"event": "skipped", "detector": ..., "reason": ...}``  the detector cannot apply to this kernel
- ``{"event": "trying", "sizes": ...}``  shape fuzzing, before each size (a crash names it)
- ``{"event": "finding", ...}``  one ``Finding``
- ``{"event": "error", "phase": "load" | "unavailable" | "budget" | "run", "message": ...}``  a bad file /
  a file that cannot run on this backend here (too few GPUs) / the probe's budget ended while the file was
  loaded / a detector's own failure
- ``{"event": "done"}``

On the GPU, a detector that leaves the CUDA context broken (an illegal address, a
device-side assert: CUDA errors that stick) ends the process after its ``end`` event
(``EXIT_CONTEXT``), so that the detectors after it start in a fresh process instead of
failing on the broken context.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

from harness.probe import context
from harness.probe.blackboard import Declared, Meta
from harness.probe.budget import RESERVED, SPENT, Budget, BudgetSpent, DetectorTimeout
from harness.probe.request import ProbeRequest
from harness.run.worker import Events, apply_memory_limit, import_failure

EXIT_LOAD, EXIT_RUN, EXIT_CONTEXT = 2, 3, 4
BENCH_CALLS = 2  # calls per autotune config, on either backend (triton_compat.patched's bench_calls)


def detectors() -> dict:
    """name -> Detector, for every detector that runs code of its own (not a GPU tool)."""
    from harness.probe.detectors import registry

    return {name: d for name, d in registry().items() if d.run is not None}


def _load(req: ProbeRequest, emit, budget: Budget):
    """The target, checked: the file imports, its declarations and ``--sizes`` are good, and
    make_inputs makes inputs at its sizes, all within the timeout (a file that hangs at import
    is bad input too) and the probe's budget (``Budget.stop``: its end is no fault of the file's).
    None after an error event."""
    from harness.probe.execute import make
    from harness.probe.target import TargetError, Unavailable, check_sizes, load

    timeout = req.timeout
    t = None
    within = budget.timer.limit(budget.stop, BudgetSpent) if budget.stop is not None else contextlib.nullcontext()
    try:
        with budget.limit(timeout, DetectorTimeout), within:
            t = load(req.file, req.inputs, req.launcher, req.backend, req.cwd)
            small = t.smallest_sizes if req.options.get("small") == "interpreter" else \
                t.small_sizes if req.options.get("small") else None
            if small:
                t.sizes = dict(small)  # a slow GPU tool's run
            if req.sizes:
                check_sizes(t.make_inputs, req.sizes)
                t.sizes = {**t.sizes, **req.sizes}
            if "gpu_sizes" in req.options:  # the GPU's sizes given by the caller (a dict), or none (False)
                given = req.options["gpu_sizes"]
                t.gpu_sizes = {**t.sizes, **{k: v for k, v in given.items() if k in t.sizes}} if given else None
            _made(t, make(t, t.sizes, req.seed, req.backend))
    except DetectorTimeout:
        what = "make_inputs" if t is not None else f"importing {req.file}"
        emit(event="error", phase="load", message=f"{what} took more than {timeout:.0f}s (the --timeout)")
        return None
    except BudgetSpent:  # not bad input: the probe's time ran out first (the parent says so for each detector)
        emit(event="error", phase="budget", message="making the inputs at the default sizes" if t is not None
             else "importing the file")
        return None
    except TargetError as e:
        emit(event="error", phase="unavailable" if isinstance(e, Unavailable) else "load", message=str(e))
        return None
    except Exception as e:  # noqa: BLE001  make_inputs raised at the file's own sizes: bad input
        from harness.errors import error_line

        sizes = ", ".join(f"{k}={v}" for k, v in t.sizes.items())
        emit(event="error", phase="load", message=f"make_inputs({sizes}) raised {error_line(e)}"[:300])
        return None
    declared = Declared(t.sizes, t.deterministic, t.tolerance, {k: list(v) for k, v in t.ranges.items()})
    emit(event="meta", **Meta(declared).to_json())
    return t


def _made(t, inputs) -> None:
    """make_inputs' result is what the launcher takes: a dict of keyword arguments."""
    from harness.probe.target import TargetError

    if not isinstance(inputs, dict):
        raise TargetError(f"make_inputs must return a dict of the launcher's arguments, got {type(inputs).__name__}")


def run(args: dict) -> int:
    """The worker's work: ``args`` is a ProbeRequest's JSON."""
    req = ProbeRequest.from_json(args)
    emit = Events(req.events)
    if (broken := import_failure()) is not None:  # a broken environment is bad input, not a finding
        emit(event="error", phase="load", message=broken)
        return EXIT_LOAD
    try:
        from harness.probe.context import Context
        from harness.probe.execute import Watch
        from harness.run.triton_compat import install_scratch_allocator, patched

        # autotune: each config benchmarked in two calls (a warm-up and one timed), not do_bench's
        # eight or more (interpreter) or 125 ms of runs (GPU, each config at each new key: most of an
        # autotuned kernel's probe); its launches' side effects still precede the real one
        gpu = req.backend == "gpu"
        # on the GPU, compilations are marked, as calls are (execute.Watch): a hang is a call that
        # does not return, not a long compilation inside it (an autotuned kernel's configs)
        with patched(interpreter=not gpu, bench_calls=BENCH_CALLS,
                     on_compile=(lambda kind: emit(event=kind)) if gpu else None) as counter:
            if gpu and os.environ.get("TRITON_INSTRUMENTATION_MODE"):
                install_scratch_allocator()  # Triton's sanitizers (a tool's run) keep their state in global scratch
            budget = req.budget()
            target = _load(req, emit, budget)
            if target is None:
                return EXIT_LOAD
            # the parent's hang clock under a budget runs only inside a call (GPU); an interpreter call
            # is stopped once the GPU's side hung (runner._stop_when); each call's tuning, which a run at
            # a new key repeats (Budget.run_cost)
            ctx = Context(target, req.backend, req.seed, "", counter, dict(req.options), emit,
                          list(req.options.get("blocks") or []), budget=budget, watch=Watch(emit, counter, budget))
            if (pad := ctx.options.get("pad")) is not None:
                ctx.pad = int(pad)
            if req.failing is not None:  # an earlier process died at these sizes: the experiments start there
                ctx.board.failing = dict(req.failing or target.sizes)
            hung = None
            for i, name in enumerate(req.detectors):
                if hung is not None:  # each would wait as long for a kernel that does not return
                    emit(event="start", detector=name)
                    emit(event="skipped", detector=name, reason=f"the kernel did not return in the {hung} detector")
                    emit(event="end", detector=name)
                    continue
                # the detectors before the diagnosis leave it its share of the probe's budget, and those before a
                # detector that holds time (the large detector's run) leave it that
                with budget.holding(held(ctx, req.detectors[i + 1:])):
                    found = run_one(ctx, name, emit, req.timeout, reserve=budget.diagnosis_reserve(ctx.backend)
                                    if "diagnose" in req.detectors[i + 1:] else 0.0)
                if any(f.code == "P002" and f.severity == "error" for f in found):
                    hung = name
                if ctx.backend == "gpu" and name != req.detectors[-1] and not context.cuda_usable():
                    return EXIT_CONTEXT
        emit(event="done")
        return 0
    except BaseException as e:  # noqa: BLE001  report everything: a crash must never pass silently
        from harness.errors import error_line

        emit(event="error", phase="run", message=error_line(e))
        return EXIT_RUN


def held(ctx, later: list) -> float:
    """Seconds of the budget the detectors still to run in this process (``later``) keep for themselves
    (``Detector.holds``): the most any of them asks."""
    found = detectors()
    return max((found[n].holds(ctx) for n in later if found[n].holds is not None), default=0.0)


def run_one(ctx, name: str, emit, timeout: float, reserve: float = 0.0) -> list:
    """One detector: its findings, or its own failure as an event (never a traceback); a
    detector past ``timeout`` seconds is stopped (a kernel spinning in the interpreter too).
    It wraps up (``ctx.late()``) at a share of its timeout or the end of the probe's budget
    (``Budget.ends``), and ``reserve`` seconds before that end once a result was seen wrong (the
    diagnosis after it needs the time; where all is right so far, the time goes to finding); one
    that keeps to the budget does not start past ``Budget.ends``. A run still going at
    ``Budget.stop`` (just before the budget's end) is stopped where it is, the defaults' runs
    (reference, guards) too, and the detector keeps what it found so far (``Detector.partial``)."""
    from harness.run.triton_compat import launched_files, reset_autotune_caches

    budget = ctx.budget
    emit(event="start", detector=name)
    ctx.name, ctx.trying = name, None
    budget.begin(timeout, reserve)
    det = detectors()[name]
    stop = budget.stop if det.keeps_budget(ctx.options) else None
    if stop is not None and budget.spent():
        why = SPENT
    elif stop is not None and budget.reserved(ctx.board.wrong()):
        why = RESERVED
    else:
        why = det.skip(ctx) if det.skip is not None else None
    if why:
        emit(event="skipped", detector=name, reason=why)
        emit(event="end", detector=name)
        return []
    reset_autotune_caches(ctx.target.kernel)  # each detector's first call tunes, as in a fresh process
    try:
        # the detector's timeout (a hang: P002) and, for one that keeps to the budget, its stop
        with budget.limit(timeout, DetectorTimeout), \
                (budget.timer.limit(stop, BudgetSpent) if stop is not None else contextlib.nullcontext()):
            found = det.run(ctx)
    except BaseException as e:  # noqa: BLE001  the detector's own failure, its time or the budget's end
        found = _stopped(ctx, det, e, timeout, emit)
    found += _analysis_failures(ctx)
    _note_failing(ctx, found)
    ctx.board.kernel_files = launched_files()  # the modules of the kernels launched: the lint cross-check's
    emit(event="meta", **Meta(blocks=ctx.blocks, seen=ctx.board).to_json())
    for f in found:
        emit(event="finding", **f.to_json())
    emit(event="end", detector=name)
    return found


def _analysis_failures(ctx) -> list:
    """A note for each analysis of the instrumented interpreter whose own code raised in this detector's runs
    (``Recorder.failed``): the probe's failure, not the kernel's, so never the launcher's error (P001). The launch
    stands; what that analysis would have said of it is missing, and the note says so."""
    from harness.probe.findings import INFO, Finding

    failed, ctx.failed = ctx.failed, []
    return [Finding("P000", ctx.name, ctx.backend, f"the probe's own {what} (its analysis of a launch failed, so "
                                                   f"its answer for that launch is missing: not a finding about "
                                                   f"the kernel)"[:300], severity=INFO) for what in failed]


def _stopped(ctx, det, e: BaseException, timeout: float, emit) -> list:
    """The findings of a detector that did not return: at its timeout a P002, at the budget's
    end what it found so far (an INFO note says where it stopped), after its own failure an
    error event and none."""
    from harness.errors import error_line
    from harness.probe.context import fmt
    from harness.probe.findings import INFO, Finding

    name = det.name
    at = f" at sizes {fmt(ctx.trying)}" if ctx.trying else ""
    if isinstance(e, DetectorTimeout):
        return [Finding("P002", name, ctx.backend, f"no result after {timeout:.0f}s{at}: stopped",
                        severity=det.timeout_severity)]
    if isinstance(e, BudgetSpent):
        try:
            kept = det.partial(ctx) if det.partial is not None else []
        except Exception as err:  # noqa: BLE001  the detector's own failure: its note, and the rest still run
            kept = []
            emit(event="error", phase="run", detector=name, message=f"keeping what it found: {error_line(err)}"[:300])
        emit(event="cut", detector=name)
        so_far = "its findings so far are kept" if det.partial is not None else "its answer needed its whole run"
        return kept + [Finding("P000", name, ctx.backend, f"stopped at the end of the probe's budget{at} "
                               f"(--budget {ctx.options.get('budget', 0):g}s): {so_far}; a larger --budget gives "
                               f"it the time", severity=INFO)]
    if not isinstance(e, Exception):
        raise e
    import traceback

    frames = traceback.extract_tb(e.__traceback__)
    where = [f"at {'/'.join(frames[-1].filename.split('/')[-3:])}:{frames[-1].lineno}"] if frames else []
    where += [f"sizes {fmt(ctx.trying)}"] if ctx.trying else []
    emit(event="error", phase="run", detector=name,
         message=f"{error_line(e)} ({', '.join(where)})" if where else error_line(e),
         traceback=traceback.format_exc(limit=8))
    return []


def _note_failing(ctx, found: list) -> None:
    """Where the diagnosis experiments start: the smallest sizes shown wrong (the quickest runs)."""
    from harness.probe.fuzz import volume

    for f in found:
        if f.severity == "error" and f.code not in ("P003", "P002"):
            sizes = dict(f.sizes or ctx.target.sizes)
            if any(v == 0 and ctx.target.sizes.get(k) != 0 for k, v in context.int_sizes(sizes).items()):
                continue  # a size of 0 the defaults do not hold (the empty-input run): nothing to take apart there
            if ctx.board.failing is None or volume(sizes) < volume(ctx.board.failing):
                ctx.board.failing = sizes
    ctx.board.wrong_now = None  # the detector's own mark (its errors set ``failing`` above)


if __name__ == "__main__":
    apply_memory_limit()
    sys.exit(run(json.loads(sys.argv[1])))
