"""Where does it go wrong? The failing sizes' run under the instrumented interpreter's bounds check,
with 0 in masked lanes as a GPU gives today (the run the experiments share, ``outcome``: every one of
them is bounds-checked): a load or store outside its tensor at these sizes is the mechanism, seen at
its line (the probe's memcheck detector ran at the default sizes, where the kernel may well stay
inside).

A load outside is the mechanism only if what it reads reaches the result: the sizes run once
more with those lanes reading poison, and a result that does not change by a bit shows a read
that is out of bounds but unused (oob-load-unused: the wrong values come from elsewhere)."""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import fmt
from harness.probe.experiments import Experiment, outcome


def run(ctx, failing: dict) -> dict:
    if ctx.backend != "interpreter":  # the bounds check is the instrumented interpreter's
        return {}
    t = ctx.target
    zero = outcome(ctx, failing)[1]  # the failing sizes' shared run: bounds-checked, 0 in masked lanes
    if zero is None:  # make_inputs or the reference declined these sizes, or the time is spent: nothing to see
        return {}
    unused = False
    if any(kind == "load" for kind, *_ in zero.oob) and zero.error is None:
        inputs = X.make(t, failing, ctx.seed, ctx.backend)
        with ctx.instrument(memcheck=True, poison_masked=False, oob_poison=True):
            poison = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, watch=ctx.watch)
        unused = poison.error is None and same_bits(zero.out, poison.out)
    ev = {}
    for (kind, tensor, side, line), hit in sorted(zero.oob.items(), key=lambda kv: kv[0][3]):
        name = ("oob-load-unused" if unused else "oob-load") if kind == "load" else "oob-store"
        ev.setdefault(name, f"at {fmt(failing)}: {hit['kernel']}: {kind} {side} of '{tensor}' by up to "
                            f"{hit['elements']} elements (program {hit['pid']}) at {line}")
    return ev


def same_bits(a, b) -> bool:
    """Whether two results (a tensor, or tuples, lists and dicts of them) are bitwise equal."""
    import torch

    from harness.core.compare import fingerprint

    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and fingerprint(a) == fingerprint(b)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same_bits(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_bits(a[k], b[k]) for k in a)
    return a == b if not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor) else False


EXPERIMENT = Experiment("where", "a load or store outside its tensor at the failing sizes?", run, rank=-2)
