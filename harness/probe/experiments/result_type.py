"""A result in a type that cannot hold it? At the failing sizes, each part of the launcher's result that comes back
as an integer (or bool) tensor where the reference's part is a float one is read against the reference's values:
values past the integer type's range wrap or saturate there whatever the kernel computes ("narrow-result", an
overflow: an int8 output allocated like its int8 operands, ``torch.empty_like(a)``, for a dequantized product),
and fractions the type drops ("narrow-fraction", a loss of precision in the store). A reference of whole values in
range (indices, counts, argmax) says nothing. The plain run's result and reference are read (the defaults' run too,
where the failing sizes showed fractions only), made once for all the experiments."""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import fmt
from harness.probe.experiments import Experiment, outcome


def run(ctx, failing: dict) -> dict:
    """At the failing sizes, then (where only fractions showed there) at the defaults, whose larger sizes reach larger
    values: a range passed is the stronger evidence, and the smallest failing sizes (one product of one pair) may hold
    no value past it."""
    found = _read(ctx, failing)  # one piece of evidence at most
    if "narrow-result" not in found and dict(failing) != dict(ctx.target.sizes) and not ctx.late():
        found = _read(ctx, dict(ctx.target.sizes)) or found
    return found


def _read(ctx, failing: dict) -> dict:
    """The one piece of evidence at ``failing`` (see the module's docstring), or {}."""
    import torch

    state, c = outcome(ctx, failing)
    if state != "wrong" or c is None or c.out is None or c.ref is None:
        return {}
    outs, refs = X.flat_parts(c.out), X.flat_parts(c.ref)
    if len(outs) != len(refs):
        return {}
    for (name, out), (_, ref) in zip(outs, refs):
        if not (isinstance(out, torch.Tensor) and isinstance(ref, torch.Tensor)) or not ref.numel() \
                or out.dtype.is_floating_point or out.dtype.is_complex or not ref.dtype.is_floating_point:
            continue
        finite = ref[torch.isfinite(ref)].double()
        if not finite.numel():
            continue
        what = f"'{name}'" if name else "the result"
        kind = str(out.dtype).replace("torch.", "")
        if out.dtype != torch.bool:
            info = torch.iinfo(out.dtype)
            lo, hi = float(finite.min()), float(finite.max())
            if lo < info.min or hi > info.max:
                return {"narrow-result": f"at {fmt(failing)}: {what} comes back as {kind}, and the reference's values "
                                         f"reach {lo:.4g} to {hi:.4g}, past {kind}'s {info.min} to {info.max}: they "
                                         f"wrap or saturate in the store whatever the kernel computes"}
        if bool((finite != finite.round()).any()):
            return {"narrow-fraction": f"at {fmt(failing)}: {what} comes back as {kind}, and the reference's values "
                                       f"have fractions, which the store drops"}
    return {}


EXPERIMENT = Experiment("result-type", "a result in a type that cannot hold the reference's values?", run, rank=0)
