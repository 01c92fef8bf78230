"""race: per launch, the addresses each program reads, stores and updates atomically; a plain
store to an address that another program also touches is a race (``Recorder.races``: both program
ids and source lines), and ``Recorder.cross_program`` counts the addresses one program writes and
another touches. A spin lock is understood: a ``tl.atomic_cas`` that finds the lock's free value and
writes another takes it, an ``atomic_xchg`` (or ``atomic_cas``) that puts the free value back gives
it back, and accesses that every program made holding one same lock (taken and given back by that
program) are no race. Atomics on a scalar pointer are one lane."""

from __future__ import annotations

from harness.run.analyses.base import (ATOMIC, KIND_NAMES, LOAD, STORE, Analysis, Launch, Options, Recorder,
                                       flat_pid, kernel_line, owner_of, pid_text)

MAX_RECORDED = 20_000_000  # accesses recorded per launch by the race detector


class Races(Analysis):
    """``find`` and ``shared`` are the per-launch analyses of the recorded accesses (``find_races``,
    ``cross_program_writes``; the sanitizer passes quicker ones that answer the same)."""

    name = __name__.rpartition(".")[2]  # the module's name

    def __init__(self, find=None, shared=None):
        self.find, self.shared = find or find_races, shared or cross_program_writes

    def on(self, options: Options) -> bool:
        return options.race

    def access(self, rec, ptrs, addrs, mask, kind):
        record_access(rec, addrs, mask, kind)
        return mask

    def atomic(self, rec, op, addrs, mask, val):
        if op == _xchg():
            note_xchg(rec, addrs, mask, val)

    def cas(self, rec, addrs, mask, old, cmp, val):
        note_cas(rec, addrs, mask, old, cmp, val)

    def program_starts(self, rec):
        program_starts(rec.current)

    def launch_ends(self, rec):
        rec.races.extend(self.find(rec.current))
        rec.cross_program += self.shared(rec.current)


def record_access(rec: Recorder, addrs, mask, kind: int) -> None:
    """Remember one access's active addresses for the race analysis of this launch."""
    launch = rec.current
    if launch is None or not rec.options.race or launch.truncated:
        return
    active = addrs[mask]
    if not active.size:
        return
    if launch.recorded + active.size > MAX_RECORDED:
        launch.truncated = rec.truncated = True
        return
    launch.recorded += active.size
    launch.accesses.append((active.ravel().copy(), flat_pid(rec.pid(), launch.grid), kind, kernel_line(),
                            launch.lockset))


def _lanes(handle, shape):
    import numpy as np

    return np.broadcast_to(np.asarray(getattr(handle, "data", handle)), shape)


def note_cas(rec: Recorder, addrs, m, old, cmp, val) -> None:
    """A spin lock taken or given back by ``tl.atomic_cas`` (race detector): a lane that found
    ``cmp`` and wrote another value takes the lock at its address (free value ``cmp``); one that
    swaps a held lock back to its free value gives it back."""
    launch = rec.current
    if launch is None or not rec.options.race:
        return
    o, c, v = (_lanes(x, addrs.shape) for x in (old, cmp, val))
    for i in zip(*(m & (o == c)).nonzero()):
        _lock_event(launch, int(addrs[i]), c[i].item(), v[i].item())


def note_xchg(rec: Recorder, addrs, m, val) -> None:
    """``tl.atomic_xchg`` of a held lock back to its free value gives the lock back (race detector)."""
    launch = rec.current
    if launch is None or not rec.options.race or not launch.held:
        return
    v = _lanes(val, addrs.shape)
    for i in zip(*m.nonzero()):
        if int(addrs[i]) in launch.held:
            _lock_event(launch, int(addrs[i]), None, v[i].item())


def _lock_event(launch: Launch, addr: int, found, wrote) -> None:
    """``found`` (None for an exchange) replaced by ``wrote`` at ``addr``: take or give back a lock."""
    if addr in launch.held:
        token, free = launch.held[addr]
        if wrote != free:
            return
        launch.tokens[token] = addr  # taken and given back: a lock
        del launch.held[addr]
    elif found is not None and wrote != found:
        launch.held[addr] = (len(launch.tokens), found)
        launch.tokens.append(None)
    else:
        return
    _set_lockset(launch, frozenset(t for t, _ in launch.held.values()))


def _set_lockset(launch: Launch, tokens: frozenset) -> None:
    if tokens not in launch.locksets:
        launch.locksets.append(tokens)
    launch.lockset = launch.locksets.index(tokens)


def program_starts(launch: Launch) -> None:
    """Each program starts holding no lock."""
    if launch.held or launch.lockset:
        launch.held.clear()
        launch.lockset = 0


def _guarded(launch: Launch, racy, addrs, locksets):
    """Which of the ``racy`` addresses every access made holding one same lock (a lock taken by
    ``tl.atomic_cas`` and given back by the same program): those accesses cannot overlap."""
    import numpy as np

    locks = [frozenset(launch.tokens[t] for t in ts if launch.tokens[t] is not None) for ts in launch.locksets]
    sel = np.isin(addrs, racy)
    pair_addrs, ids = unique_pairs(addrs[sel], locksets[sel])
    _, first, counts = np.unique(pair_addrs, return_index=True, return_counts=True)
    guarded = np.array([bool(locks[ids[f]]) for f in first], dtype=bool) & (counts == 1)
    for i in np.flatnonzero(counts > 1):
        sets = [locks[j] for j in ids[first[i]:first[i] + counts[i]]]
        guarded[i] = bool(frozenset.intersection(*sets))
    return guarded


def unique_pairs(a, b) -> tuple:
    """The distinct (a[i], b[i]) pairs, sorted by a then b, as two arrays (a's values, b's). Sorting and
    comparing neighbours, not ``np.unique(..., axis=0)``, which views the rows as a structured dtype: on an H200
    (NumPy 2.5.2) a race run raised "Cannot compare structured arrays unless they have a common dtype" from
    NumPy's set routines, and those views were the only structured arrays in it (not reproduced since, here or
    there)."""
    import numpy as np

    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    keep = np.ones(a.size, dtype=bool)
    keep[1:] = (a[1:] != a[:-1]) | (b[1:] != b[:-1])
    return a[keep], b[keep]


def find_races(launch: Launch, limit: int = 5) -> list[dict]:
    """Addresses a program stores to (plainly) that another program of the launch also touches."""
    import numpy as np

    if not launch.accesses:
        return []
    addrs = np.concatenate([a for a, *_ in launch.accesses])
    locksets = np.concatenate([np.full(a.size, ls, dtype=np.int64) for a, *_, ls in launch.accesses])
    pids = np.concatenate([np.full(a.size, p, dtype=np.int64) for a, p, *_ in launch.accesses])
    kinds = np.concatenate([np.full(a.size, k, dtype=np.int8) for a, _, k, *_ in launch.accesses])
    access = np.concatenate([np.full(a.size, i, dtype=np.int64) for i, (a, *_) in enumerate(launch.accesses)])
    shared_addrs, n = np.unique(unique_pairs(addrs, pids)[0], return_counts=True)
    shared = shared_addrs[n > 1]
    stored = np.unique(addrs[kinds == STORE])
    racy = np.intersect1d(shared, stored)
    if len(launch.locksets) > 1 and racy.size:  # some accesses held a spin lock
        racy = racy[~_guarded(launch, racy, addrs, locksets)]
    out = []
    for addr in racy[:limit]:
        at = addrs == addr
        store = np.flatnonzero(at & (kinds == STORE))[0]
        p = pids[store]
        other = np.flatnonzero(at & (pids != p))[0]
        out.append(_race(launch, int(addr), access[store], access[other], int(racy.size)))
    return out


def cross_program_writes(launch: Launch) -> int:
    """How many addresses one program of the launch writes (a store or an atomic) and another
    program also touches: 0 means the programs share nothing they write, so no program order can
    change what the launch computes."""
    import numpy as np

    if not launch.accesses:
        return 0
    addrs = np.concatenate([a for a, *_ in launch.accesses]).astype(np.uint64)
    pids = np.concatenate([np.full(a.size, p, dtype=np.uint64) for a, p, *_ in launch.accesses])
    kinds = np.concatenate([np.full(a.size, k, dtype=np.int8) for a, _, k, *_ in launch.accesses])
    shared_addrs, n = np.unique(unique_pairs(addrs, pids)[0], return_counts=True)
    return int(np.intersect1d(shared_addrs[n > 1], addrs[kinds != LOAD]).size)


def _race(launch: Launch, addr: int, first: int, second: int, total: int) -> dict:
    _, p1, _, line1, _ = launch.accesses[first]
    _, p2, k2, line2, _ = launch.accesses[second]
    owner = owner_of(launch.spans, addr)
    where = f"{owner[0]}[{owner[1]}]" if owner else hex(addr)
    unflat = lambda p: pid_text((p % launch.grid[0], p // launch.grid[0] % launch.grid[1],  # noqa: E731
                                  p // (launch.grid[0] * launch.grid[1])))
    return {"kernel": launch.kernel, "address": where, "store_pid": unflat(p1), "store_line": line1,
            "other_pid": unflat(p2), "other_kind": KIND_NAMES[k2], "other_line": line2, "addresses": total}


def _xchg():
    from triton._C.libtriton import ir

    return ir.ATOMIC_OP.XCHG
