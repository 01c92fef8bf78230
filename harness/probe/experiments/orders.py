"""Computed wrong, or overwritten? The failing sizes run once more with the programs in reverse
order. A store that strays onto elements another program owns is put right in one of the two
orders, the one where the owner writes last; an element wrong in both orders was computed
wrong by its own program, from values it should not have used. Beside an out-of-bounds load and
store, that tells a read that reaches the result (keys past the sequence's end entering a
softmax) from a write that lands on a neighbour's output (a channel block past the last
channel). Under the interpreter only: it sets the program order."""

from __future__ import annotations

from harness.probe.context import fmt
from harness.probe.experiments import Experiment, outcome


def wrong_elements(ctx, c):
    """The result elements outside the probe's tolerance (flat), or None where there is no one result."""
    import torch

    if c is None or c.out is None or not hasattr(c.out, "shape") or c.out.shape != c.ref.shape:
        return None
    out, ref = c.out.reshape(-1).double(), c.ref.reshape(-1).double()
    rtol, atol = ctx.target.tolerance_for(c.out.dtype, c.ref)
    return ~torch.isclose(out, ref, rtol=rtol, atol=atol, equal_nan=True)


def run(ctx, failing: dict) -> dict:
    from harness.probe import execute as X

    if ctx.backend != "interpreter" or ctx.late():
        return {}
    state, forward = outcome(ctx, failing)
    first = wrong_elements(ctx, forward) if state == "wrong" else None
    if first is None or not bool(first.any()):
        return {}
    inputs = X.make(ctx.target, failing, ctx.seed, ctx.backend)
    with ctx.instrument(poison_masked=False, memcheck=True, order="reverse"):
        back = X.call(ctx.target, inputs, backend=ctx.backend, watch=ctx.watch, ref=forward.ref)
    second = wrong_elements(ctx, back) if back.error is None else None
    if second is None or second.shape != first.shape:
        return {}
    both = int((first & second).sum())
    if not both:
        return {}
    return {"wrong-any-order": f"at {fmt(failing)}: {both} of {first.numel()} result elements are wrong with the "
                               f"programs in order and in reverse: their own program computes them wrong, no "
                               f"other program's store overwrites them"}


EXPERIMENT = Experiment("orders", "wrong in every program order (computed wrong, not overwritten)?", run, rank=1)
