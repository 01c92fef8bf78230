"""An integer that wraps? The failing sizes' run under the interpreter (the run the experiments share,
``outcome``) has every signed add, subtract and multiply of 32 bits or fewer in the kernel's own lines
checked against the same operation in 64 bits (the analysis ``harness.run.analyses.intwrap``: what TRITON_DEBUG's
overflow checks do on a GPU): a result that differs wrapped, and an index, offset or
random-number counter past 2**31 is the mechanism ("debug-assert", at its line, as the GPU's
TRITON_DEBUG=1 run reports it), whatever the values then do. Triton's own library code (Philox in
tl.rand wraps by design) is not checked."""

from __future__ import annotations

from harness.probe.context import fmt
from harness.probe.experiments import Experiment, outcome


def run(ctx, failing: dict) -> dict:
    if ctx.backend != "interpreter":
        return {}
    state, c = outcome(ctx, failing)  # the failing sizes' shared run watches the kernel's integers too
    if state != "wrong" or not c.wraps:
        return {}
    line, what = c.wraps[0]
    return {"debug-assert": f"at {fmt(failing)}: a signed integer wraps at {line} ({what}): an index, offset or "
                        f"counter past the type's range (TRITON_DEBUG's overflow check, emulated)"}


EXPERIMENT = Experiment("intwrap", "a signed integer add, subtract or multiply that wraps?", run, rank=2)
