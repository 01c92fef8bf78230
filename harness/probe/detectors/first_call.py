"""The first call (autotune tunes here) against the second, each on fresh copies of the inputs:
autotune's benchmarking runs repeat atomics and in-place updates before the real launch."""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.casecheck import ProbeCheck
from harness.probe.context import crash, wrong
from harness.probe.detectors import Detector, uses_atomics_or_autotune
from harness.probe.findings import ERROR, Code


def run(ctx) -> list:
    from harness.run.triton_compat import reset_autotune_caches

    t = ctx.target
    inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    ref = X.reference(t, inputs)
    # a true first call: every autotuner the launcher ran so far forgets its configs, wherever its module lives (a
    # launcher imported from a package: the worker's reset before each detector clears the probe file's only)
    reset_autotune_caches(t.kernel, launched=True)
    calls = []
    for _ in range(2):
        with ctx.instrument(poison_masked=False):
            calls.append(ctx.call(X.clone_inputs(inputs), ref=ref, counter=ctx.counter))
        if calls[-1].error is not None:
            return [crash(ctx, calls[-1].error, t.sizes)]
    first, second = calls
    if first.bench_launches:
        ctx.board.autotune = True
    tuned = f"; autotune launched the kernel {first.bench_launches} times during the first call" \
        if first.bench_launches else ""
    if first.cmp["close"] == second.cmp["close"]:
        return []
    bad, good = ("first", "second") if not first.cmp["close"] else ("second", "first")
    w = first if bad == "first" else second
    return [ctx.finding("P502", f"the {bad} call is wrong and the {good} is right: {wrong(w.cmp)}{tuned}")]


P502 = Code("P502", ERROR, "the first call differs from later calls (autotune's benchmarking runs on the real "
                           "buffers)", ("inplace-autotune", "autotune-hides-partial-write"))


# --- its case check (detect, report): how the casebook scores the same idea on its cases ---

class FirstCall(ProbeCheck):
    name = "first-call"
    label = "first call"
    what = "the probe's first-call: the first call (which autotunes) against the second, on fresh copies (P502)"
    yours = "python -m harness probe your_kernel.py (or test a freshly autotuned kernel's first call; never warm up)"
    order = 30
    reads = ("first-call",)
    codes = ("P502",)


DETECTOR = Detector("first-call", "the first call against the second (autotune)", run,
                    process={"interpreter": 0, "gpu": 0}, rank=6, skip=uses_atomics_or_autotune, codes=(P502,),
                    case=(FirstCall(),))
