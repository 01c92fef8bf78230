"""Seeded shape fuzzing: which sizes to try, and shrinking a failure to the smallest sizes.

Pure functions (no torch): ``plan`` lists the size dicts to try, ``shrink`` walks a
failing one down. Sizes come from the declared ranges or, when none are declared, from
around the defaults: 1, small primes, powers of two and their neighbours, multiples of
the kernel's block sizes plus and minus one (the tails and the several-program grids
where bugs hide), the default and its neighbours. Each size stays below its default
or three blocks and one (whichever is larger), and their product below four times the
defaults' product, so that an interpreter run stays short.

Beyond those: each threshold of the launcher's own branches (``harness.probe.branches``)
and its neighbours, and the 16-bit index limits where FUZZ's range reaches them, up to
``BIG_VOLUME`` elements. A size is pinned by ``FUZZ = {"n": 1024}`` (an int) or named in
``pins`` (``--sizes``): it keeps its value while the others are fuzzed.
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


BIG_VOLUME = 1 << 22  # a threshold or dtype-limit size may go this far (the other sizes made small to fit)
INDEX_LIMITS = (1 << 15, 1 << 16)  # where a 16-bit index wraps: tried only where FUZZ's range reaches them


def pinned(defaults: dict, ranges: dict, pins=()) -> dict:
    """The sizes that fuzzing keeps: ``FUZZ = {"n": 1024}`` (an int: that value; a range (v, v) too)
    and the names in ``pins`` (``--sizes n=1024``: their default value)."""
    out = {}
    for k, r in ranges.items():
        if isinstance(r, int) and not isinstance(r, bool):
            out[k] = r
        elif isinstance(r, (tuple, list)) and len(r) == 2 and r[0] is not None and r[0] == r[1]:
            out[k] = int(r[0])
    return {**out, **{k: defaults[k] for k in pins if k in defaults}}  # --sizes wins over FUZZ


def size_range(ranges: dict, k: str) -> tuple:
    r = ranges.get(k, (None, None))
    return tuple(r) if isinstance(r, (tuple, list)) and len(r) == 2 else (None, None)


def pools_for(defaults: dict, blocks: list[int], ranges: dict, pins=(), thresholds: dict | None = None) -> dict:
    """The values worth trying for each size that is fuzzed (pinned sizes left out), the thresholds
    of the launcher's branches included (so shrinking can stop right at one)."""
    fixed = pinned(defaults, ranges, pins)
    out = {}
    for k, v in defaults.items():
        if not isinstance(v, int) or isinstance(v, bool) or k in fixed:
            continue
        lo, hi = size_range(ranges, k)
        extra = {x for x in edges(k, thresholds or {}, ranges) if lo is None or x >= lo}
        out[k] = sorted(set(candidates(v, blocks, lo, hi)) | extra)
    return out


def edges(k: str, thresholds: dict, ranges: dict) -> list[int]:
    """t - 1, t, t + 1 for each threshold of size ``k`` in the launcher's branches, and the 16-bit
    index limits where FUZZ's range for ``k`` reaches them; ascending, each at least 1."""
    lo, hi = size_range(ranges, k)
    vals = {x for t in thresholds.get(k, ()) for x in (t - 1, t, t + 1)}
    if hi is not None:
        vals |= {x for t in INDEX_LIMITS if t <= hi + 1 for x in (t - 1, t, t + 1)}
    return sorted(v for v in vals if v >= max(1, lo or 1) and (hi is None or v <= hi))


def plan(defaults: dict, blocks: list[int], ranges: dict, seed: int, trials: int,
         thresholds: dict | None = None, pins=(), largest: bool = False, values=()) -> list[dict]:
    """Size dicts to try: each size alone at its most telling values, then each threshold of the
    launcher's branches (and pairs of them: a path taken when two sizes cross theirs) and index
    limit, then seeded mixes up to ``trials`` in all. With ``largest`` (on a GPU, where one run at
    millions of elements is quick) the defaults' own tails come first, then each size alone at its
    largest, then the rest.
    The thresholds and the largest are always all there (beyond ``trials``), and may pass the
    volume cap up to ``BIG_VOLUME``, with the other sizes made small. Pinned sizes (``pinned``)
    keep their value everywhere. ``values``: sizes that shape no tensor (``_tops``); without
    ``largest`` these alone go to their top, with the other sizes at their defaults."""
    rng = random.Random(seed)
    fixed = pinned(defaults, ranges, pins)
    base = {**defaults, **fixed}
    thresholds = thresholds or {}
    pools = pools_for(base, blocks, ranges, fixed, None)
    seen = {tuple(sorted(base.items()))}
    cap = max(4 * volume(defaults), MIN_VOLUME)
    plain, must = [], []

    def adder(into):
        return _adder(seen, cap, into)

    tops, small = [], []  # each size at its top: as it is, and with the others made small (on a GPU)
    add, add_must = adder(plain), adder(must)
    for k, pool in pools.items():  # one size at a time: tails and block edges
        for v in [pool[0], *[x for x in pool if any(x % b in (1, b - 1) for b in blocks)][:3]]:
            add({**base, k: v})
    tails: list = []
    add_tail = adder(tails)
    for k, pool in pools.items():  # the default's own tails: one off a block multiple at the real scale,
        for v in own_tails(base[k], blocks, pool):  # where a long last block holds what a short one cannot
            add_tail({**base, k: v})                 # (a decay that overflows only far into a chunk)
    n_edges = len(plain)
    _across(add_must, base, pools, thresholds, ranges)
    _mixes(rng, base, pools, add, lambda: len(plain) >= trials, trials)
    if largest:
        _tops(adder(tops), adder(small), base, pools, ranges, values)
    else:  # under the interpreter only the sizes that shape no tensor go to their top (the defaults' cost)
        add_value = adder(tops)
        for k in (k for k in pools if k in values):
            if (top := _top(k, ranges, pools)) > base[k]:
                add_value({**base, k: top}, float("inf"))
    return _ordered(largest, base, tails, tops, small, plain[:n_edges], must + plain[n_edges:trials])


def _adder(seen: set, cap: int, into: list):
    """``add(sizes, limit=cap)``: ``sizes`` appended to ``into`` (True) unless already in ``seen`` or past ``limit``'s
    volume (False); ``seen`` keeps it."""
    def add(sizes, limit=cap):
        key = tuple(sorted(sizes.items()))
        if key not in seen and volume(sizes) <= limit:
            seen.add(key)
            into.append(sizes)
            return True
        return False
    return add


def _mixes(rng: random.Random, base: dict, pools: dict, add, full, trials: int) -> None:
    """Seeded mixes of the sizes' pools (each size from its pool with probability 0.6, else its default)
    through ``add`` until ``full()`` or ``trials * 20`` draws."""
    for _ in range(trials * 20):
        if full() or not pools:
            break
        sizes = dict(base)
        for k, pool in pools.items():
            if rng.random() < 0.6:
                sizes[k] = rng.choice(pool)
        add(sizes)


def more(defaults: dict, blocks: list[int], ranges: dict, seed: int, trials: int, turn: int, pins=(),
         seen=()) -> list[dict]:
    """A later turn's sizes (``turn`` 1, 2, ...): ``trials`` more seeded mixes, as ``plan``'s last part draws them,
    from a stream of their own (the seed and the turn), none of ``seen`` (the sizes already planned). Shape
    fuzzing draws them while its own time lasts after the plan ran out: a failure that only some mixes of
    sizes show (a short row, a tail in two sizes at once) has more chances, and nothing else changes."""
    rng = random.Random(seed * 1_000_003 + turn)
    fixed = pinned(defaults, ranges, pins)
    base = {**defaults, **fixed}
    pools = pools_for(base, blocks, ranges, fixed, None)
    taken = {tuple(sorted(base.items())), *(tuple(sorted(s.items())) for s in seen)}
    out: list = []
    _mixes(rng, base, pools, _adder(taken, max(4 * volume(defaults), MIN_VOLUME), out), lambda: len(out) >= trials,
           trials)
    return sorted(out, key=volume)


def _ordered(largest: bool, base: dict, tails: list, tops: list, small: list, edges: list, rest: list) -> list:
    """The plan's order. Each size alone, cheapest first (a flag at 1 before a longer row): on a
    loaded CPU the telling values of every size come before the costly ones. On a GPU, where a run
    costs its compile (a new specialization) more than its volume, the default's own tails go first
    (the defaults' compile), then each size at its top, furthest from its default first (a query
    scale that overflows only at 5000), then the edges."""
    if largest:
        tops = sorted(tops, key=lambda s: -max(v / max(1, base[k]) for k, v in s.items() if isinstance(v, int)))
        return tails + tops + sorted(small, key=volume) + sorted(edges, key=volume) + rest
    return sorted(edges + tails, key=volume) + tops + rest


def _tops(add_top, add_small, base: dict, pools: dict, ranges: dict, values) -> None:
    """Each size alone at its largest (the top of FUZZ's range: a value that overflows only there),
    the others at their defaults where that fits ``BIG_VOLUME``, else made small (which may be sizes
    a GPU refuses: a tl.dot needs 16). ``values``: sizes that shape no tensor (a scale), which add no
    work and do not count in the volume."""
    work = volume({x: v for x, v in base.items() if x not in values})  # the defaults' run, values aside
    for k in pools:
        top = _top(k, ranges, pools)
        if top <= base[k]:
            continue
        if work * (1 if k in values else top // max(1, base[k])) <= BIG_VOLUME:
            add_top({**base, k: top}, float("inf"))
        else:
            big(add_small, {**base, k: top}, k, pools)


def _top(k: str, ranges: dict, pools: dict) -> int:
    """The largest value of size ``k``: the top of FUZZ's range, else of its pool."""
    return size_range(ranges, k)[1] or pools[k][-1]


def _across(add_must, base: dict, pools: dict, thresholds: dict, ranges: dict) -> None:
    """Each threshold of the launcher's branches and index limit, and two sizes across their
    thresholds at once (each side of each), through ``add_must``."""
    edge = {k: edges(k, thresholds, ranges) for k in pools}
    for k, vals in edge.items():
        for v in vals:
            big(add_must, {**base, k: v}, k, pools)
    keys = [k for k in edge if thresholds.get(k)]
    for i, a in enumerate(keys):
        for b in keys[i + 1:]:
            for va in (v for t in sorted(thresholds[a]) for v in (t - 1, t + 1) if v in edge[a]):
                for vb in (v for t in sorted(thresholds[b]) for v in (t - 1, t + 1) if v in edge[b]):
                    big(add_must, {**base, a: va, b: vb}, (a, b), pools)


def own_tails(default: int, blocks: list[int], pool: list[int]) -> list[int]:
    """default - 1 and default + 1 where the default is a multiple of a block size (and they are
    in the pool): the tail a user meets first, one element off the size they tested."""
    if default < 2 or not any(default % b == 0 for b in blocks if b >= 2):
        return []
    return [v for v in (default - 1, default + 1) if v in pool]


def big(add, sizes: dict, keep, pools: dict) -> bool:
    """Add ``sizes`` past the usual volume cap, up to ``BIG_VOLUME``: as they are if they fit, else with
    the sizes other than ``keep`` (a name or a tuple of names) at their smallest."""
    keep = (keep,) if isinstance(keep, str) else tuple(keep)
    if volume(sizes) <= BIG_VOLUME:
        return add(sizes, BIG_VOLUME)
    small = {**sizes, **{k: pool[0] for k, pool in pools.items() if k not in keep and pool}}
    return add(small, BIG_VOLUME)


def volume(sizes: dict) -> int:
    """The product of the integer sizes: a stand-in for the work one run takes."""
    v = 1
    for x in sizes.values():
        if isinstance(x, int) and not isinstance(x, bool):
            v *= max(1, x)
    return v


def smaller(sizes: dict, key: str, pool: list[int]) -> list[dict]:
    return [{**sizes, key: v} for v in pool if v < sizes[key]]


def shrink(failing: dict, fails, pools: dict, budget: int = 40, deadline: float | None = None,
           now=None) -> tuple[dict, int]:
    """The smallest sizes (one size at a time, smallest value first) that still fail; and the runs it
    took. Stops after ``budget`` runs or at ``deadline`` (a ``now()``: ``time.monotonic`` unless given)."""
    import time

    now = now or time.monotonic
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
                if runs >= budget or (deadline is not None and now() > deadline):
                    return best, runs
    return best, runs
