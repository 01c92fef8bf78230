"""Another CUDA stream? A Triton launch goes to the current stream; work the launcher queued on a
side stream (``torch.cuda.Stream()``, ``with torch.cuda.stream(side)``) runs beside it, ordered
only where the program says so (``wait_stream``, events). Where the launcher's source makes a
stream, the failing sizes run with every ``torch.cuda.Stream()`` standing for the current stream,
so that all the work runs in program order: wrong in the plain runs and right in every one of
these, the kernel read (or wrote) what work on another stream had not finished. (The interpreter
has no streams.)"""

from __future__ import annotations

import contextlib
import inspect

from harness.probe import execute as X
from harness.probe.context import fmt
from harness.probe.experiments import Experiment

RUNS = 4  # runs in program order, all of which must be right
PLAIN = 8  # plain runs at most, until one is wrong (a race shows in some)


def _makes_streams(target) -> bool:
    from harness.probe.kernels import user_modules

    for m in user_modules(target):
        try:
            src = inspect.getsource(m)
        except (OSError, TypeError):
            continue
        if "Stream(" in src:  # a stream made (the patch stands for those only)
            return True
    return False


@contextlib.contextmanager
def _one_stream():
    """``torch.cuda.Stream()`` gives the current stream while it is open."""
    import torch

    from harness.run.patching import Patcher

    real = torch.cuda.Stream

    class Current(real):  # a subclass: isinstance(s, torch.cuda.Stream) elsewhere still holds
        def __new__(cls, *args, **kwargs):
            if "stream_id" in kwargs:  # torch's own handle on a stream that exists (current_stream() makes
                return real(*args, **kwargs)  # one through this very name): left alone, or it recurses
            return torch.cuda.current_stream()

    with Patcher() as patch:
        patch.setattr(torch.cuda, "Stream", Current)
        yield


def _wrong(ctx, inputs: dict, ref) -> bool | None:
    c = X.call(ctx.target, X.clone_inputs(inputs), backend=ctx.backend, watch=ctx.watch, ref=ref, on_device=True)
    if c.error is not None or not c.cmp:
        return None
    return not c.cmp["close"]


def run(ctx, failing: dict) -> dict:
    if ctx.backend != "gpu" or not _makes_streams(ctx.target):
        return {}
    # a race shows in some runs only, and more often where there is more work: the shrunk sizes
    # first, then where shape fuzzing first met the failure, then the defaults
    for sizes in [failing, *(ctx.board.found_at or [])[:2], ctx.target.sizes]:
        ev = _at(ctx, sizes)
        if ev is not None:
            return ev
    return {}


def _at(ctx, failing: dict) -> dict | None:
    """The evidence at ``failing``, {} when the ordered runs are wrong too; None when no plain run
    there was wrong (nothing to tell apart)."""
    ctx.trying = failing
    try:
        # one set of inputs and its reference, a fresh copy each run, each result compared on the GPU:
        # making them and comparing on the host were most of a run's time where they are large
        # (stream-no-sync's 4096 x 4096 matrices: 8 s for the runs below, past the diagnosis's share)
        inputs = X.make(ctx.target, failing, ctx.seed, ctx.backend)
        ref = X.reference(ctx.target, inputs)
        plain = []
        while len(plain) < PLAIN and not any(plain) and not ctx.late():
            plain.append(_wrong(ctx, inputs, ref))
        if not any(plain):
            return None
        with _one_stream():
            ordered = [_wrong(ctx, inputs, ref) for _ in range(RUNS)]
    except Exception:  # noqa: BLE001  make_inputs or the reference declined these sizes
        return None
    if all(w is False for w in ordered):
        return {"other-stream": f"at {fmt(failing)}: wrong in 1 of {len(plain)} runs; right "
                                f"in all {RUNS} with every torch.cuda.Stream() the current stream (all the work "
                                f"in program order): the kernel and work on another stream are not ordered"}
    return {}


EXPERIMENT = Experiment("streams", "right once all the launcher's work runs on the current stream (GPU)?", run,
                        rank=-3)
