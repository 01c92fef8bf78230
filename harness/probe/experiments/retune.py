"""A tuned config reused where it does not fit? The autotuner keeps one config per value of its
``key``; a launch whose key matches an earlier one reuses that config, even when an argument
left out of the key (a row width the configs were pruned for) makes it wrong there. The failing
sizes run once more with every autotuned kernel tuning afresh at each launch (the analysis
``harness.run.analyses.tuning``, on every backend): right then, and the wrong result came from a
reused config."""

from __future__ import annotations

from harness.probe.context import fmt
from harness.probe.experiments import Experiment, outcome


def run(ctx, failing: dict) -> dict:
    from harness.probe.kernels import known_facts

    if not known_facts(ctx).autotune or outcome(ctx, failing)[0] != "wrong" or ctx.late():
        return {}
    from harness.probe import execute as X

    # its own inputs: not the plain run the other experiments share
    state = outcome(ctx, failing, X.make(ctx.target, failing, ctx.seed, ctx.backend), fresh_tuning=True)[0]
    if state == "right":
        return {"autotune-reuse": f"wrong at {fmt(failing)}; right when every launch tunes afresh: a config "
                                  f"tuned for one launch was reused for another that shares its autotune key"}
    return {}


EXPERIMENT = Experiment("retune", "right when every launch tunes afresh (autotune key)?", run, rank=2)
