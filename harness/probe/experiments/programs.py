"""One program or many? Right when a single program covers a size (one block), wrong when
several do, at block multiples (no tail): the programs do not combine their parts right (a
block-local reduction stored as if global, partials combined with the wrong operator, a race)."""

from __future__ import annotations

from harness.probe.context import int_sizes
from harness.probe.experiments import Experiment, outcome


def run(ctx, failing: dict) -> dict:
    blocks = sorted({b for b in (ctx.blocks or []) if isinstance(b, int) and b >= 2})
    if not blocks:
        return {}
    for k, v in int_sizes(failing).items():
        for b in blocks:
            if v <= b or ctx.late():
                continue
            one = outcome(ctx, {**failing, k: b})[0]
            if one != "right":
                continue
            many = [(m, outcome(ctx, {**failing, k: m})[0]) for m in (2 * b, 4 * b) if m <= max(v, 2 * b)]
            bad = [m for m, r in many if r == "wrong"]
            if bad:
                return {"many-programs": f"right at {k}={b} (one block of {b}); wrong at {k}={bad[0]} "
                                         f"({bad[0] // b} blocks, no tail)"}
    return {}


EXPERIMENT = Experiment("programs", "right with one program, wrong with several?", run, rank=4)
