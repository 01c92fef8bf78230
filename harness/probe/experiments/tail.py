"""Is it the tail? Wrong at a size off a multiple of the block size, right at the multiples
on either side of it, and wrong again one block on with the same remainder: the last, partial
block is where it goes wrong (a missing mask, padded lanes entering the result, a grid that
drops the remainder). Right one block on, it was not the tail: the inputs made at the other
sizes lacked what the failing ones had (a value past a threshold, say).

The blocks tried are the kernels' own (the constexprs the launch was given), largest first; where
none was seen (a GPU run) the guesses (``GUESSES``), none far past the size. A grain coarser than any
block (a runtime split) is the ``grain`` experiment's, after every other."""

from __future__ import annotations

from harness.probe.experiments import Experiment
from harness.probe.tails import GUESSES, search, seen_blocks


def run(ctx, failing: dict) -> dict:
    seen = seen_blocks(ctx)
    return search(ctx, failing, seen or list(reversed(GUESSES)), guessed=not seen)


EXPERIMENT = Experiment("tail", "wrong only off a block multiple?", run, rank=3)
