"""lanes: what the lanes of one program do to each other, which the interpreter hides (it runs
the lanes of a block in lockstep, and writes the lanes of a store in index order). Runs with the
race detector (``Options.race``). Two observations, per launch:

- **collisions** (``Recorder.collisions``): a ``tl.store`` whose active lanes write one address
  with different values. On a GPU which lane lands is unspecified; the interpreter's last lane
  always wins. Lanes that write the same value (a broadcast) are harmless and not recorded.
- **cross-lane reads** (``Recorder.cross_lane``): a ``tl.load`` whose active lane reads an
  address that another lane of the same program stored (another flat index in the block; any
  lane where the two blocks' shapes differ) since the program's last ``tl.debug_barrier()``. On a
  GPU the lanes are threads of several warps and the load may run before the other thread's
  store. A lane reading back its own store is fine.
- **overwrites** (``Recorder.overwrites``): a ``tl.store`` whose active lane writes, with another
  value, an address that another lane of the same program stored since the last barrier. On a GPU
  the two stores are two threads' with nothing ordering them: which lands is unspecified. Where the
  overwriting lane had loaded that address since the barrier, the store is a read-modify-write whose
  read came before the other lane's store (the other update is lost whatever the order: a tile
  scattered into overlapping ranges, ``x[l - d]``, ``x[l]``, ``x[l + d]``, each loaded, added to
  and stored back) or after it with no barrier (a cross-lane read, above). A lane storing over its
  own store is fine.

Atomics are neither: they are ordered by the hardware."""

from __future__ import annotations

from harness.run.analyses.base import Analysis, Options, Recorder, kernel_line, owner_of, pid_text

MAX_STORED = 20_000_000  # lanes of the stores a program keeps since its last barrier
_LANE_BITS = 40  # a lane's key: its block shape's number above these bits, its flat index below


class Lanes(Analysis):
    name = __name__.rpartition(".")[2]  # the module's name

    def __init__(self):
        self.launch = None  # the launch the records below are of
        self.collide: dict = {}  # store line -> what the store's lanes wrote over each other
        self.cross: dict = {}  # (load line, store line) -> what the load read of other lanes' stores
        self.stores: list = []  # this program's stores since its last barrier: (lo, hi, addrs, keys, line, bits)
        self.loads: list = []  # its loads since its last barrier: (lo, hi, addrs, keys), addrs sorted
        self.kept_loads = 0  # lanes of those loads (a budget of their own: loads never crowd out stores)
        self.over: dict = {}  # (store line, other store line) -> what the store wrote over other lanes' stores
        self.kept = 0
        self.shapes: dict = {}

    def on(self, options: Options) -> bool:
        return options.race

    def program_starts(self, rec):
        if rec.current is not self.launch:
            self.launch, self.collide, self.cross, self.shapes, self.over = rec.current, {}, {}, {}, {}
        self.barrier(rec)

    def barrier(self, rec):
        self.stores, self.loads, self.kept, self.kept_loads = [], [], 0, 0

    def store(self, rec, ptrs, addrs, mask, value):
        import numpy as np

        if rec.current is None or not mask.any():
            return
        line = kernel_line()
        a = addrs[mask]
        bits = _bits(np.broadcast_to(np.asarray(getattr(value, "data", value)), addrs.shape)[mask])
        n, first = collisions(a, bits)
        if n:
            _count(self.collide, line, n, rec, first)
        keys = self._keys(mask)
        if self.stores:
            self._check_store(rec, a, keys, bits, line)
        if self.kept + a.size <= MAX_STORED:
            order = np.lexsort((keys, a))
            self.stores.append((int(a.min()), int(a.max()), a[order], keys[order], line, bits[order]))
            self.kept += a.size

    def load(self, rec, ptrs, addrs, mask, other):
        import numpy as np

        if rec.current is None or not mask.any():
            return other
        a, keys = addrs[mask], self._keys(mask)
        if self.stores:
            self._check_load(rec, a, keys)
        if self.kept_loads + a.size <= MAX_STORED:
            order = np.lexsort((keys, a))
            self.loads.append((int(a.min()), int(a.max()), a[order], keys[order]))
            self.kept_loads += a.size
        return other

    def launch_ends(self, rec):
        kernel = rec.current.kernel
        rec.collisions += [{"kernel": kernel, "store_line": line, **hit} for line, hit in self.collide.items()]
        rec.cross_lane += [{"kernel": kernel, "load_line": load, "store_line": store, **hit}
                           for (load, store), hit in self.cross.items()]
        rec.overwrites += [{"kernel": kernel, "store_line": store, "other_line": other, **hit}
                           for (store, other), hit in self.over.items()]
        self.launch, self.collide, self.cross, self.over = None, {}, {}, {}
        self.barrier(rec)

    def _keys(self, mask):
        """Each active lane's key: its block shape's number and its flat index in the block."""
        import numpy as np

        shape = self.shapes.setdefault(mask.shape, len(self.shapes))
        return np.flatnonzero(mask).astype(np.int64) + (shape << _LANE_BITS)

    def _check_store(self, rec: Recorder, a, keys, bits, line) -> None:
        """The addresses of this store (lanes ``keys``, values ``bits``) that a store since the barrier wrote from
        another lane with other bits, and of those, the ones this lane loaded since the barrier (``_stale``)."""
        lo, hi = int(a.min()), int(a.max())
        for s_lo, s_hi, s_addrs, s_keys, s_line, s_bits in self.stores:
            if s_lo > hi or s_hi < lo:
                continue
            hit = overwritten(a, keys, bits, s_addrs, s_keys, s_bits)
            if hit.any():
                stale = self._stale(a[hit], keys[hit])
                _count(self.over, (line, s_line), int(hit.sum()), rec, int(a[hit][0]))
                self.over[(line, s_line)]["rmw"] = self.over[(line, s_line)].get("rmw", 0) + stale

    def _stale(self, a, keys) -> int:
        """How many of ``a`` the same lane (``keys``) loaded since the barrier."""
        import numpy as np

        n = np.zeros(a.shape, dtype=bool)
        for l_lo, l_hi, l_addrs, l_keys in self.loads:
            if l_lo > int(a.max()) or l_hi < int(a.min()):
                continue
            left = np.searchsorted(l_addrs, a, "left")
            right = np.searchsorted(l_addrs, a, "right")
            for i in np.flatnonzero((right > left) & ~n):
                n[i] = bool((l_keys[left[i]:right[i]] == keys[i]).any())
        return int(n.sum())

    def _check_load(self, rec: Recorder, a, keys) -> None:
        lo, hi, line = int(a.min()), int(a.max()), None
        for s_lo, s_hi, s_addrs, s_keys, s_line, _ in self.stores:
            if s_lo > hi or s_hi < lo:
                continue
            n, first = other_lanes(a, keys, s_addrs, s_keys)
            if n:
                line = line or kernel_line()
                _count(self.cross, (line, s_line), n, rec, first)


def _bits(values):
    """The values as unsigned integers of their size: equal bits, equal values (NaN included)."""
    import numpy as np

    v = np.ascontiguousarray(values)
    return v.view(f"u{v.itemsize}") if v.itemsize in (1, 2, 4, 8) else v


def collisions(addrs, bits) -> tuple[int, int]:
    """How many of ``addrs`` (one store's active lanes) get different ``bits`` from different
    lanes, and the first such address (0 where none)."""
    import numpy as np

    s = np.sort(addrs)
    if not (s[1:] == s[:-1]).any():
        return 0, 0
    order = np.lexsort((bits, addrs))
    a, b = addrs[order], bits[order]
    hit = np.unique(a[1:][(a[1:] == a[:-1]) & (b[1:] != b[:-1])])
    return int(hit.size), int(hit[0]) if hit.size else 0


def other_lanes(addrs, keys, s_addrs, s_keys) -> tuple[int, int]:
    """How many of the load's ``addrs`` (lanes ``keys``) a store (``s_addrs`` sorted, with their
    ``s_keys`` sorted within each address) wrote from another lane, and the first (0 where none)."""
    import numpy as np

    left = np.searchsorted(s_addrs, addrs, "left")
    right = np.searchsorted(s_addrs, addrs, "right")
    hit = right > left
    if not hit.any():
        return 0, 0
    first, last = s_keys[np.minimum(left, s_addrs.size - 1)], s_keys[np.maximum(right - 1, 0)]
    other = np.unique(addrs[hit & ((first != keys) | (last != keys))])
    return int(other.size), int(other[0]) if other.size else 0


def overwritten(addrs, keys, bits, s_addrs, s_keys, s_bits):
    """Which of a store's ``addrs`` (lanes ``keys``, values ``bits``) an earlier store (``s_addrs`` sorted, its
    ``s_keys`` and ``s_bits`` in that order) wrote last from another lane with other bits: a bool mask."""
    import numpy as np

    right = np.searchsorted(s_addrs, addrs, "right")
    seen = right > 0
    last = np.maximum(right - 1, 0)
    seen &= s_addrs[last] == addrs
    return seen & (s_keys[last] != keys) & (s_bits[last] != bits)


def _count(table: dict, key, n: int, rec: Recorder, addr: int) -> None:
    """Add one access's ``n`` addresses to its entry; the first program and address stay."""
    hit = table.get(key)
    if hit is None:
        owner = owner_of(rec.current.spans, addr)
        table[key] = {"addresses": n, "pid": pid_text(rec.pid()),
                      "address": f"{owner[0]}[{owner[1]}]" if owner else hex(addr)}
    else:
        hit["addresses"] += n
