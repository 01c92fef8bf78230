"""The tail experiments' search (``experiments/tail.py`` at the kernels' own blocks, ``experiments/grain.py`` at
a coarser grain): wrong at a size off a multiple of a block, right at the multiples on either side of it, and
wrong again one block on with the same remainder. Shared by the two plugins, so it lives a layer down."""

from __future__ import annotations

from harness.probe.context import fmt, int_sizes
from harness.probe.experiments import outcome
from harness.probe.fuzz import volume
from harness.probe.kernels import blocks as block_sizes

GUESSES = (16, 32, 64, 128, 256, 512, 1024)  # block sizes to try where none was seen (a GPU run)
GROWTH, SMALL = 8, 1 << 16  # a size tried may make the work this many times larger, or up to this volume


def seen_blocks(ctx) -> list:
    """The kernels' own block sizes (the constexprs the launch was given), largest first."""
    return sorted({b for b in (block_sizes(ctx) or []) if isinstance(b, int) and b >= 2}, reverse=True)


def search(ctx, failing: dict, blocks: list, guessed: bool) -> dict:
    """The tail's evidence at one of ``blocks`` (``guessed``: none is the kernels' own), or {}."""
    # the evidence says "wrong at" the failing sizes: seen here (shape fuzzing's failure may have
    # been a rounding error just over the tolerance that other inputs at those sizes do not repeat)
    if outcome(ctx, failing)[0] != "wrong":
        return {}
    for k, v in int_sizes(failing).items():
        for b in blocks:
            # a guessed block far past the size says little about it; a block the launch was given is the kernel's
            # own, however small the size shape fuzzing shrank to (k=3 inside one block of 128: right at 128 and
            # wrong again at 131 is the tail's evidence as at any size)
            if v % b == 0 or (guessed and b > max(2 * v, 64)):
                continue
            lo, hi = (v // b) * b, (v // b + 1) * b
            if volume({**failing, k: v + b}) > max(GROWTH * volume(failing), SMALL):
                continue  # a batch of 1 raised to 64 (64 times the work) costs a slow kernel the budget
            tried = [s for s in (lo, hi) if s > 0]
            if ctx.late() or not tried:
                return {}
            results = {s: outcome(ctx, {**failing, k: s})[0] for s in tried}
            if all(r == "right" for r in results.values()):
                # the same remainder one block on is a tail too: wrong there as well, or it was not the tail
                # (a bug that needs certain values, and the inputs at the other sizes lacked them)
                if outcome(ctx, {**failing, k: v + b})[0] != "wrong":
                    return {}
                return {"tail": f"wrong at {fmt({k: v})} and {k}={v + b}; right at "
                                f"{' and '.join(f'{k}={s}' for s in tried)} (multiples of {b})"}
    return {}
