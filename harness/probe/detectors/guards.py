"""Guard bands around every tensor, poison in the launcher's own allocations.

Writes into the bands are P111. Elements of a tensor the launcher allocated (``torch.empty``)
that still hold the poison are P113 only when a second run, with another fill, leaves the same
elements at that fill too: an element the kernel wrote that happens to equal the poison (255 in
a uint8 output, a NaN carried from the poison) is not "never written".
"""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.casecheck import ProbeCheck
from harness.probe.context import crash, label, never_written, poison_or_own
from harness.probe.detectors import Detector
from harness.probe.findings import ERROR, INFO, P112, Code


def run(ctx) -> list:
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    with ctx.instrument(poison_masked=False):
        c = ctx.call(X.clone_inputs(inputs))
    if c.error is not None:
        return [crash(ctx, c.error, t.sizes)]
    out = []
    for name, n in c.guard.get("wrote_past_end", {}).items():
        out.append(ctx.finding("P111", f"{n} guard elements around {label(name)} changed: "
                                       f"the kernel wrote outside the tensor"))
    for name, n in never_written(ctx, inputs, c).items():  # a scratch buffer the right result does not need: info
        note = "" if not c.cmp.get("close") else "; the result is right (information: scratch the kernel need not fill)"
        out.append(ctx.finding("P113", f"{n} elements of {label(name)} (allocated by the launcher) never written "
                                       f"(they kept their contents under two different fills){note}",
                               severity=INFO if c.cmp.get("close") else ERROR))
    if c.returned and not c.cmp["close"]:
        with ctx.instrument(poison_masked=False):
            kept = X.unwritten_in_place(t, inputs, c.returned, pad=ctx.pad)
        if kept:
            out.append(ctx.finding("P113", f"{kept} elements of '{c.returned}' (the result) keep whatever they "
                                           f"held before the launch: never written"))
    if c.cmp.get("nonfinite") and not out:
        out += poison_or_own(ctx, inputs, c)
    return out


P111 = Code("P111", ERROR, "the guard band around a tensor changed: the kernel wrote outside it",
            ("add-missing-mask", "conv2d-channel-mask"))
P113 = Code("P113", ERROR, "output elements never written: they keep what they held before the launch",
            ("grid-floor-division", "grid-ignores-meta"),
            otherwise="info where the result is right (scratch the launcher allocated that the kernel need not fill)")


# --- its case checks (detect, report): how the casebook scores the same idea on its cases ---

class Poison(ProbeCheck):
    name = "poison"
    label = "poison reads"
    what = "the probe's reference and guard bands: NaN results that go with finite guard bands (P112: read outside)"
    yours = "python -m harness probe your_kernel.py (or put inputs inside NaN-filled buffers, hand the kernel views)"
    order = 40
    reads = ("reference", "guards")
    codes = ("P112",)


class Canary(ProbeCheck):
    name = "canary"
    label = "canary writes"
    what = "the probe's guard bands: a write outside a tensor (P111), output never written (P113)"
    yours = "python -m harness probe your_kernel.py (or fill outputs and a margin with a sentinel; check both)"
    order = 50
    reads = ("guards",)
    codes = ("P111", "P113")


DETECTOR = Detector("guards", "guard bands around every tensor, poison in torch.empty", run,
                    process={"interpreter": 1, "gpu": 0}, rank=1, codes=(P111, P112, P113),
                    case=(Poison(), Canary()))
