"""Which parts of a reduction reach the result? For a size the result does not have (it is
reduced over), the failing sizes run twice more: once with the inputs' elements before the
first block boundary along it doubled, once with those after it doubled. A part whose change
moves the reference but not the result (beyond the tolerance) is left out of the reduction
("ignored-part": a tl.sum over one block stored as if it were the whole); when both parts move
the result, every part is read, and a reduction right with one block and wrong with several
combines its parts wrong ("all-parts": a square root taken per block, then added)."""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import fmt, int_sizes
from harness.probe.kernels import blocks as block_sizes
from harness.probe.experiments import Experiment, last_axis, outcome


def _doubled(inputs: dict, v: int, part: slice) -> dict:
    """The inputs with the elements in ``part`` of the last axis of length ``v`` of each float tensor doubled."""
    import torch

    out = {}
    for k, t in inputs.items():
        if isinstance(t, torch.Tensor) and t.is_floating_point() and v in t.shape:
            t = X.same_layout(t)
            t.narrow(last_axis(t, v), part.start, part.stop - part.start).mul_(2)
        out[k] = t
    return out


def _moves(ctx, base, c) -> tuple[bool, bool]:
    """(the result moved, the reference moved) against the base run, each by more than the probe's
    tolerance (float atomics' order moves a result's last bits between any two runs on a GPU)."""
    import torch

    if c is None or c.out is None or not hasattr(c.out, "shape") or c.out.shape != base.out.shape:
        return True, True
    rtol, atol = ctx.target.tolerance_for(base.out.dtype, base.ref)

    def moved(a, b) -> bool:
        return not bool(torch.allclose(a.double(), b.double(), rtol=rtol, atol=atol, equal_nan=True))
    return moved(c.out, base.out), moved(c.ref, base.ref)


def run(ctx, failing: dict) -> dict:
    import torch

    state, base = outcome(ctx, failing)
    if state != "wrong" or base is None or base.out is None or not hasattr(base.ref, "shape") \
            or not hasattr(base.out, "shape") or not bool(torch.isfinite(base.out).all()):
        return {}  # (an Inf or NaN result stays one whatever reaches it)
    inputs = X.make(ctx.target, failing, ctx.seed, ctx.backend)
    blocks = sorted({b for b in (block_sizes(ctx) or []) if isinstance(b, int) and b >= 2})
    for k, v in sorted(int_sizes(failing).items(), key=lambda kv: -kv[1]):
        if v < 2 or v in tuple(base.ref.shape) or ctx.late():
            continue  # not reduced over: the size is one of the result's
        cut = max((b for b in blocks if b < v), default=v // 2)
        parts = {"before": slice(0, cut), "after": slice(cut, v)}
        runs = {name: outcome(ctx, failing, _doubled(inputs, v, p)) for name, p in parts.items()}
        if any(state in ("refused", "late") for state, _ in runs.values()):
            return {}  # a run that did not happen tells nothing about what moves
        moved = {name: _moves(ctx, base, c) for name, (_, c) in runs.items()}
        if all(m == (True, True) for m in moved.values()) and "after" in moved:
            return {"all-parts": f"at {fmt(failing)}: the result moves with the elements of {k} before {cut} and "
                                 f"with those after it, as the reference does: every part is read"}
        left = [name for name, (res, ref) in moved.items() if ref and not res]
        if left:
            return {"ignored-part": f"at {fmt(failing)}: doubling the elements of {k} {left[0]} {cut} moves the "
                                    f"reference and not the result: the reduction leaves them out"}
    return {}


EXPERIMENT = Experiment("parts", "which parts of a reduction reach the result?", run, rank=5)
