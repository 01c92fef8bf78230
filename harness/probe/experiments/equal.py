"""Two sizes mixed up? Wrong where two sizes differ and right once they are made equal (the
larger of the two for both): the kernel uses one where the other belongs: a causal mask
aligned to the wrong corner when the query and key lengths differ, an output assumed square,
a stride of one axis used for the other."""

from __future__ import annotations

import itertools

from harness.probe.context import fmt, int_sizes
from harness.probe.experiments import Experiment, outcome

PAIRS = 6  # pairs of sizes tried at most
GROWTH = 64  # a size raised more than this many times (and past 1024) is not tried


def run(ctx, failing: dict) -> dict:
    sizes = {k: v for k, v in int_sizes(failing).items() if v >= 1}
    if outcome(ctx, failing)[0] != "wrong":
        return {}
    for a, b in itertools.islice(((a, b) for a, b in itertools.combinations(sorted(sizes), 2)
                                  if sizes[a] != sizes[b]), PAIRS):
        if ctx.late():
            break
        v = max(sizes[a], sizes[b])  # raised, not lowered: lowering one could make it equal a third size
        if v > GROWTH * min(sizes[a], sizes[b]) and v > 1024:
            continue  # a run that much larger (a row index raised to an offset of millions) costs the budget
        if outcome(ctx, {**failing, a: v, b: v})[0] == "right":
            return {"equal-sizes": f"wrong at {fmt(failing)}; right with {a} = {b} = {v}: the kernel uses one of "
                                   f"the two where the other belongs"}
    return {}


EXPERIMENT = Experiment("equal", "right once two sizes that differ are made equal?", run, rank=4)
