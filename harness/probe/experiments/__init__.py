"""The diagnosis experiments: one module each, in one registry (like the detectors).

An experiment is a module of this package defining ``EXPERIMENT = Experiment(name, question,
run)``. ``run(ctx, failing)`` is given the worker's ``Context`` and sizes at which the kernel
is wrong, runs the kernel the way its question needs (other sizes, other layouts), and
returns evidence: ``{name in harness.core.spec.EVIDENCE: the observation, one line}``.
``harness.probe.detectors.diagnose`` runs them; ``harness.probe.diagnosis`` ranks what
they establish.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Experiment:
    name: str
    question: str
    run: Callable  # (ctx, failing sizes) -> {evidence: text}
    rank: int = 0


@functools.cache
def registry() -> dict[str, Experiment]:
    from harness.probe.detectors import discover

    return discover(__name__, __path__, "EXPERIMENT", Experiment)


def last_axis(t, n: int) -> int:
    """The last axis of ``t`` of length ``n`` (one that is in its shape)."""
    return len(t.shape) - 1 - list(reversed(t.shape)).index(n)


def outcome(ctx, sizes: dict, inputs: dict | None = None, **analyses):
    """One call at ``sizes`` (or on ``inputs``, with more of the interpreter's ``analyses`` on, as
    ``ctx.instrument`` takes them) as a GPU runs it today (0 in masked lanes):
    ("right" | "wrong" | "refused" | "late" | "trivial", the Call). Refused: make_inputs, the reference or
    Triton declined these sizes, or the probe's own analysis raised in the run (a P000 note), which tells
    nothing; late: the experiments' time is spent (a run already made at these sizes is still answered), which
    tells nothing either; trivial: the kernel matched a
    reference that is 0 everywhere, which says nothing of its formula (neither right nor wrong: a wrong formula
    times a weight of 0 is 0 too)."""
    import contextlib

    from harness.probe import execute as X
    from harness.probe.context import told_own_failure
    from harness.probe.detectors.shapes import refused

    t = ctx.target
    ctx.trying = sizes
    cache = ctx.board.outcomes  # the failing sizes' plain run: several experiments start there
    key = tuple(sorted(sizes.items())) if inputs is None and not analyses else None
    if key is not None and key in cache:
        return cache[key]
    if ctx.late():  # each experiment's next run would overrun the diagnosis budget: a slow kernel's
        return "late", None  # runs (seconds each under the interpreter) must not stack up past it
    try:
        if inputs is None:
            inputs = X.make(t, sizes, ctx.seed, ctx.backend)
        ref = X.reference(t, inputs)
    except Exception:  # noqa: BLE001
        return "refused", None
    # bounds-checked (an access outside is dropped, not made): a kernel that corrupts the heap at
    # these sizes must not take the experiments' process down with it
    c = None
    # under the interpreter one run can take longer than the whole budget (a size an experiment
    # raised 100-fold): it stops at the deadline, and tells nothing
    # the bounds check and the int wrap check watch every run (neither changes what it computes, and each
    # costs little beside the run): the ``where`` and ``intwrap`` experiments read the failing sizes' shared
    # run (``Call.oob``, ``Call.wraps``), not a run of their own of the same launch (seconds each here)
    t0 = ctx.budget.now()
    with ctx.budget.until_deadline() if ctx.backend == "interpreter" else contextlib.nullcontext():
        with ctx.instrument(poison_masked=False, memcheck=True, **{"int_wrap": True, **analyses}) as rec:
            c = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, ref=ref, watch=ctx.watch)
    if c is None:
        return "late", None
    c.seconds = ctx.budget.now() - t0
    if rec is not None:
        c.programs = sum(rec.programs.values())
        c.loads = rec.loads
        c.oob, c.wraps = dict(rec.oob), list(rec.wraps)
    if c.error is not None:
        result = ("refused" if refused(c.error) or told_own_failure(ctx, c.error) else "wrong"), c
    elif c.cmp["close"] and _nothing_to_get_wrong(ref):
        result = "trivial", c
    else:
        result = ("right" if c.cmp["close"] else "wrong"), c
    if key is not None:
        cache[key] = result
    return result


def _nothing_to_get_wrong(ref) -> bool:
    """Whether every element of the reference's result is 0: a kernel that matches it there may compute nothing
    (a zero drawn for the only weight at these sizes zeroes every product, right or wrong the formula), so a match
    is no evidence that it is right at those sizes."""
    import torch

    from harness.probe import execute as X

    parts = [t for _, t in X.flat_parts(ref) if isinstance(t, torch.Tensor) and t.numel()]
    return bool(parts) and all(not bool(t.ne(0).any()) for t in parts)
