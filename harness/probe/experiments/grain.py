"""Is it the tail of a coarser grain than any block? Where the tail experiment found no tail at the kernels' own
blocks, the powers of two past the largest of them (to 1024): the work is often cut by a runtime value (a split of
1024 vocabulary entries walked in blocks of 256), whose padded part is the tail, wrong off a multiple of that grain
and right at the multiples beside it. Run after every other experiment: its runs at sizes raised to the grain cost
the least telling of them their time otherwise."""

from __future__ import annotations

from harness.probe.experiments import Experiment
from harness.probe.tails import GUESSES, search, seen_blocks


def run(ctx, failing: dict) -> dict:
    seen = seen_blocks(ctx)
    coarser = [g for g in GUESSES if seen and g > seen[0]]
    if not coarser or "tail" in (ctx.board.evidence or {}):
        return {}
    return search(ctx, failing, coarser, guessed=False)


EXPERIMENT = Experiment("grain", "wrong only off a multiple of a grain coarser than the kernels' blocks?", run, rank=6)
