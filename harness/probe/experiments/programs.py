"""One program or many? Right when a single program covers a size (one block), wrong when
several do, at block multiples (no tail): the programs do not combine their parts right (a
block-local reduction stored as if global, partials combined with the wrong operator, a race).

Where the instrumented interpreter counts the programs and the loads, and the wrong size
launched no more programs but made more loads, it is not the programs: a loop inside each
program runs more times, and something carried from one trip to the next is wrong (a pointer
or index step, an accumulator reset): many-iterations. (No more programs and no more loads:
the kernel never looks past its first block, a partial reduction: many-programs.)"""

from __future__ import annotations

from harness.probe.context import int_sizes
from harness.probe.kernels import blocks as block_sizes
from harness.probe.experiments import Experiment, outcome


def run(ctx, failing: dict) -> dict:
    blocks = sorted({b for b in (block_sizes(ctx) or []) if isinstance(b, int) and b >= 2})
    if not blocks:
        return {}
    for k, v in int_sizes(failing).items():
        for b in blocks:
            if v <= b or ctx.late():
                continue
            one, right = outcome(ctx, {**failing, k: b})
            if one != "right":
                continue
            many = [(m, outcome(ctx, {**failing, k: m})) for m in (2 * b, 4 * b) if m <= max(v, 2 * b)]
            bad = [(m, c) for m, (r, c) in many if r == "wrong"]
            if bad:
                m, wrong = bad[0]
                seen = f"right at {k}={b} (one block of {b}); wrong at {k}={m} ({m // b} blocks, no tail)"
                if (None not in (right.programs, wrong.programs, right.loads, wrong.loads)
                        and wrong.programs <= right.programs and wrong.loads > right.loads):
                    return {"many-iterations": f"{seen}, with no more programs ({wrong.programs}): "
                                               f"a loop inside each program runs more times"}
                return {"many-programs": seen}
    return {}


EXPERIMENT = Experiment("programs", "right with one program, wrong with several?", run, rank=4)
