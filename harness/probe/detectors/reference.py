"""The default sizes against the float64 reference.

A wrong result is then taken apart, one emulation at a time:

- masked lanes of a ``tl.load`` without ``other=`` hold poison under the interpreter (Triton
  leaves them undefined). When the result is wrong with poison and right with 0 in those lanes,
  the kernel relies on what today's GPUs happen to give (0): a *warning*, P203, naming the
  loads. When 0 is wrong too, the result is wrong on a GPU today: an *error*.
- ``tl.dot`` of fp32 operands is rounded like TF32 (the GPU's default; on a GPU it is, and the
  call runs again with Triton's fp32 default set to "ieee"): a result right without that rounding
  is P204, a *warning* where the dots are left at Triton's default (the matmul-tf32-default
  lesson), information where the source asks for TF32.
"""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe import tf32_rounding as tf32
from harness.probe.casecheck import FLAGGED, QUIET, CaseCheck, Evidence, ProbeCheck, no_result
from harness.probe.context import crash, fmt, poison_or_own, wrong
from harness.probe.detectors import Detector, kept_so_far
from harness.probe.findings import ERROR, P112, P203, P204, WARNING, Code


def run(ctx) -> list:
    found = _judged(ctx)
    ctx.board.reference_now = None  # judged to the end: nothing for the budget's end to keep
    return found


def _judged(ctx) -> list:
    from harness.run.triton_compat import reset_autotune_caches

    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)

    def call(canary=None, **emulation):
        # a first call again, as the one it is compared with: every autotuner the launcher ran, wherever it lives
        reset_autotune_caches(t.kernel, launched=True)
        with ctx.instrument(**emulation) as rec:
            return ctx.call(X.clone_inputs(inputs), ref=ref, canary=canary), rec

    c, rec = call()
    if c.error is not None:
        return [crash(ctx, c.error, t.sizes)]
    poisoned = ", ".join(rec.poison_lines) if rec is not None and rec.poisoned_loads else ""
    if poisoned:
        ctx.board.poisoned_loads = list(rec.poison_lines)
        zero, _ = call(poison_masked=False)  # what today's GPUs give in those lanes
        if zero.error is None and c.cmp["close"] and not zero.cmp["close"]:  # poison hid it (a NaN max ignores)
            return [ctx.finding("P201", f"at {fmt(t.sizes)} with 0 in the masked lanes of a tl.load without other= "
                                        f"(what today's GPUs give): {wrong(zero.cmp)}", line=poisoned,
                                sizes=dict(t.sizes))]
        if zero.error is None and not c.cmp["close"] and zero.cmp["close"]:
            return [ctx.finding("P203", f"masked lanes of a tl.load without other= enter the result: with poison in "
                                        f"them {wrong(c.cmp)}; with 0 (what today's GPUs give, undefined in "
                                        f"Triton) it matches", line=poisoned, severity=WARNING)]
        if zero.error is None and not c.cmp["close"]:
            c = zero  # what a GPU computes today; the poison is not the cause
    if c.cmp["close"]:
        return []
    shown = _wrong_result(ctx, c)
    # what the budget's end keeps (``partial``): the wrong result as a GPU computes it, once TF32 rounding is ruled
    # out (each run below only names its cause more closely, an error whatever it finds: the NaN read from the
    # guard bands, the buffers read before written); a run at the defaults can take seconds under the interpreter
    ctx.board.reference_now = None if tf32.could_round(ctx, inputs, rec) else [shown]
    if c.error is None and (lines := tf32.right_without_tf32(ctx, inputs, ref, rec)) is not None:
        return [tf32.finding(ctx, lines, f"at {fmt(t.sizes)}: {wrong(c.cmp)}", t.sizes)]
    ctx.board.reference_now = [shown]
    if c.kept or c.allocated:  # buffers the launcher allocated: is the result right when they start at 0?
        zeroed, _ = call(canary=lambda dtype: 0, poison_masked=False)
        if zeroed.error is None and zeroed.cmp["close"]:
            return [ctx.finding("P114", f"right only when the buffers the launcher allocated (torch.empty) start at "
                                        f"0: {wrong(c.cmp)} with other contents in them; the kernel reads or "
                                        f"accumulates into them before writing", sizes=dict(t.sizes))]
    if c.cmp["nonfinite"]:
        return poison_or_own(ctx, inputs, c) or [shown]
    return [shown]


def _wrong_result(ctx, c):
    """The finding of a wrong result at the default sizes: P202 where it holds NaN or Inf, else P201."""
    t = ctx.target
    if c.cmp["nonfinite"]:
        return ctx.finding("P202", f"{c.cmp['nonfinite']} non-finite elements where the reference is finite: "
                                   f"{wrong(c.cmp)}", severity=ERROR, sizes=dict(t.sizes))
    return ctx.finding("P201", f"at {fmt(t.sizes)}: {wrong(c.cmp)}", sizes=dict(t.sizes))


def partial(ctx) -> list:
    """What the budget's end keeps of a run it stopped: the wrong result seen, once TF32 rounding was ruled out."""
    return kept_so_far(ctx, "reference_now")


P114 = Code("P114", ERROR, "right only when the buffers the launcher allocated (`torch.empty`) start at 0: the "
                           "kernel reads or accumulates into them before writing", ("atomic-accumulator-empty",))
P201 = Code("P201", ERROR, "a wrong result at the default sizes: past the tolerance against the float64 reference "
                           "and past the error floor", ("exp2-wrong-base", "causal-mask-wrong-corner"))
P202 = Code("P202", ERROR, "NaN or Inf where the reference is finite", ("softmax-no-max-subtraction",
                                                                        "fp16-accumulation"))


# --- its case checks (detect, report): how the casebook scores the same idea on its cases ---

class Reference(CaseCheck):
    name = label = "reference"
    what = "compares every result with a float64 reference (rtol/atol from case.toml)"
    yours = "torch.testing.assert_close(out, ref_in_float64) on sizes that are not multiples of the block"
    order = 10

    def check(self, ev: Evidence) -> tuple[str, str]:
        if (r := no_result(ev.run)) is not None:
            return r
        bad = [t for t in ev.run.trials if not t.close]
        if not bad:
            return QUIET, f"all {len(ev.run.trials)} results match the reference"
        worst = max(bad, key=lambda t: (t.max_abs, t.n_bad))
        runs = len({(t.trial, t.call) for t in bad})
        return FLAGGED, f"{runs} of {len(ev.run.trials)} results wrong; call {worst.call + 1}: " \
                        f"{worst.result} (reference {worst.reference})"


class NanScan(ProbeCheck):
    name = "nan-scan"
    label = "NaN/Inf scan"
    what = "the probe's reference: NaN or Inf where the reference is finite, not from its NaN guard bands (P202)"
    yours = "python -m harness probe your_kernel.py (or assert torch.isfinite(out).all())"
    order = 60
    reads = ("reference",)
    codes = ("P202",)


DETECTOR = Detector("reference", "the default sizes against the float64 reference", run,
                    process={"interpreter": 0, "gpu": 0}, rank=0,
                    codes=(P112, P114, P201, P202, P203, P204), partial=partial,
                    case=(Reference(), NanScan()))
