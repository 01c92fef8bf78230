"""Seeded shape fuzzing: which sizes to try, and shrinking a failure to the smallest sizes.

Pure functions (no torch): ``plan`` lists the size dicts to try, ``shrink`` walks a
failing one down. Sizes come from the declared ranges or, when none are declared, from
around the defaults: 1, small primes, powers of two and their neighbours, multiples of
the kernel's block sizes plus and minus one (the tails and the several-program grids
where bugs hide), the default and its neighbours. Each size stays below its default
or three blocks and one (whichever is larger), and their product below four times the
defaults' product, so that an interpreter run stays short.
"""

from __future__ import annotations

import random

MIN_VOLUME = 1 << 16  # sizes whose product is past max(4 x the defaults', this) are not tried
PRIMES = (2, 3, 5, 7, 13, 31, 61, 127, 251, 509, 1021, 2039, 4093, 8191)


def candidates(default: int, blocks: list[int], lo: int | None = None, hi: int | None = None) -> list[int]:
    """The values worth trying for one size, ascending."""
    top = max(blocks or [1])
    hi = hi if hi is not None else max(default, 3 * top + 1)
    lo = lo if lo is not None else 1
    vals = {1, default, default - 1, default + 1, *PRIMES}
    p = 2
    while p <= hi + 1:
        vals |= {p - 1, p, p + 1}
        p *= 2
    for b in blocks:
        for k in (1, 2, 3, 5):
            vals |= {k * b - 1, k * b, k * b + 1}
    return sorted(v for v in vals if lo <= v <= hi)


def plan(defaults: dict, blocks: list[int], ranges: dict, seed: int, trials: int) -> list[dict]:
    """``trials`` size dicts: first each size alone at its most telling values, then seeded mixes."""
    rng = random.Random(seed)
    pools = {k: candidates(v, blocks, *ranges.get(k, (None, None))) for k, v in defaults.items()
             if isinstance(v, int) and not isinstance(v, bool)}
    out, seen = [], {tuple(sorted(defaults.items()))}
    cap = max(4 * _volume(defaults), MIN_VOLUME)

    def add(sizes):
        key = tuple(sorted(sizes.items()))
        if key not in seen and _volume(sizes) <= cap:
            seen.add(key)
            out.append(sizes)

    for k, pool in pools.items():  # one size at a time: tails and block edges
        for v in [pool[0], *[x for x in pool if any(x % b in (1, b - 1) for b in blocks)][:3]]:
            add({**defaults, k: v})
    for _ in range(trials * 20):
        if len(out) >= trials or not pools:
            break
        sizes = dict(defaults)
        for k, pool in pools.items():
            if rng.random() < 0.6:
                sizes[k] = rng.choice(pool)
        add(sizes)
    return out[:trials]


def _volume(sizes: dict) -> int:
    """The product of the integer sizes: a stand-in for the work one run takes."""
    v = 1
    for x in sizes.values():
        if isinstance(x, int) and not isinstance(x, bool):
            v *= max(1, x)
    return v


def smaller(sizes: dict, key: str, pool: list[int]) -> list[dict]:
    return [{**sizes, key: v} for v in pool if v < sizes[key]]


def shrink(failing: dict, fails, pools: dict, budget: int = 40, deadline: float | None = None) -> tuple[dict, int]:
    """The smallest sizes (one size at a time, smallest value first) that still fail; and the runs it
    took. Stops after ``budget`` runs or at ``deadline`` (``time.monotonic()``)."""
    import time

    best, runs = dict(failing), 0
    changed = True
    while changed and runs < budget:
        changed = False
        for key, pool in pools.items():
            for cand in smaller(best, key, pool):
                runs += 1
                if fails(cand):
                    best, changed = cand, True
                    break
                if runs >= budget or (deadline is not None and time.monotonic() > deadline):
                    return best, runs
    return best, runs
