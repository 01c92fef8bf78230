"""The default sizes against the float64 reference.

A wrong result is then taken apart, one emulation at a time:

- masked lanes of a ``tl.load`` without ``other=`` hold poison under the interpreter (Triton
  leaves them undefined). When the result is wrong with poison and right with 0 in those lanes,
  the kernel relies on what today's GPUs happen to give (0): a *warning*, P203, naming the
  loads. When 0 is wrong too, the result is wrong on a GPU today: an *error*.
- ``tl.dot`` of fp32 operands is rounded like TF32 (the GPU's default): a result right without
  that rounding is P204.
"""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import crash, fmt, poison_or_own, wrong
from harness.probe.detectors import Detector
from harness.probe.findings import ERROR, WARNING


def run(ctx) -> list:
    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)
    with ctx.instrument() as rec:
        c = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, ref=ref)
    if c.error is not None:
        return [crash(ctx, c.error, t.sizes)]
    if rec is not None and rec.poisoned_loads:
        ctx.seen["poisoned_loads"] = list(rec.poison_lines)
    from harness.run.triton_compat import reset_autotune_caches

    if c.cmp["close"] and rec is not None and rec.poisoned_loads:  # poison can hide what 0 shows (a NaN max ignores)
        reset_autotune_caches(t.kernel)
        with ctx.instrument(poison_masked=False):
            zero = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, ref=ref)
        if zero.error is None and not zero.cmp["close"]:
            return [ctx.finding("P201", f"at {fmt(t.sizes)} with 0 in the masked lanes of a tl.load without other= "
                                        f"(what today's GPUs give): {wrong(zero.cmp)}", line=", ".join(rec.poison_lines),
                                sizes=dict(t.sizes))]
    if c.cmp["close"]:
        return []

    out = []
    if rec is not None and rec.poisoned_loads:
        reset_autotune_caches(t.kernel)  # a first call again, as the one it is compared with
        with ctx.instrument(poison_masked=False):
            zero = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, ref=ref)
        lines = ", ".join(rec.poison_lines)
        if zero.error is None and zero.cmp["close"]:
            return [ctx.finding("P203", f"masked lanes of a tl.load without other= enter the result: with poison in "
                                        f"them {wrong(c.cmp)}; with 0 (what today's GPUs give, undefined in "
                                        f"Triton) it matches", line=lines, severity=WARNING)]
        if zero.error is None:
            c = zero  # what a GPU computes today; the poison is not the cause
    if rec is not None and rec.tf32_dots:
        reset_autotune_caches(t.kernel)
        with ctx.instrument(tf32=False, poison_masked=False):
            again = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, ref=ref)
        if again.error is None and again.cmp["close"]:
            return [ctx.finding("P204", f"with tl.dot rounded like TF32 (fp32 operands, default input_precision): "
                                        f"{wrong(c.cmp)}; without it the result matches",
                                line=", ".join(rec.dot_lines))]
    if c.kept:  # buffers the launcher allocated: is the result right when they start at 0?
        reset_autotune_caches(t.kernel)
        with ctx.instrument(poison_masked=False):
            zeroed = X.call(t, X.clone_inputs(inputs), backend=ctx.backend, ref=ref, canary=lambda dtype: 0)
        if zeroed.error is None and zeroed.cmp["close"]:
            return [ctx.finding("P114", f"right only when the buffers the launcher allocated (torch.empty) start at "
                                        f"0: {wrong(c.cmp)} with other contents in them; the kernel reads or "
                                        f"accumulates into them before writing", sizes=dict(t.sizes))]
    if c.cmp["nonfinite"] and (own := poison_or_own(ctx, inputs, c)):
        out += own
    elif c.cmp["nonfinite"]:
        out.append(ctx.finding("P202", f"{c.cmp['nonfinite']} non-finite elements where the reference is finite: "
                                       f"{wrong(c.cmp)}", severity=ERROR, sizes=dict(t.sizes)))
    else:
        out.append(ctx.finding("P201", f"at {fmt(t.sizes)}: {wrong(c.cmp)}", sizes=dict(t.sizes)))
    return out


DETECTOR = Detector("reference", "the default sizes against the float64 reference", run,
                    process={"interpreter": 0, "gpu": 0}, rank=0)
