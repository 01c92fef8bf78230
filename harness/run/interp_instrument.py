"""An instrumented Triton interpreter: memory checking, race recording, program order,
poison in masked lanes and TF32 rounding, applied for one block and undone after it.

``instrumented(...)`` is the one entry point. Inside the block, every launch of an
interpreted kernel (``TRITON_INTERPRET=1``):

- **memcheck**: every active lane of a ``tl.load``, ``tl.store`` and atomic is checked
  against the bounds of the tensor argument its pointer was computed from (a tag on the
  pointer's ``TensorHandle``, carried through ``+``, broadcasts, reshapes, ``where``
  and block pointers; an untagged pointer must fall inside some tensor argument). An
  out-of-bounds lane is recorded (tensor, side, distance in elements, program id,
  kernel source line) and not performed: a load gets poison, a store is dropped.
- **race**: per launch, the addresses each program reads, stores and updates
  atomically; a plain store to an address that another program also touches is a
  race, reported with both program ids and source lines. A spin lock is understood: a
  ``tl.atomic_cas`` that finds the lock's free value and writes another takes it, an
  ``atomic_xchg`` (or ``atomic_cas``) that puts the free value back gives it back, and
  accesses that every program made holding one same lock (taken and given back by that
  program) are no race. Atomics on a scalar pointer are one lane.
- **order**: the programs of a grid run in program-id order ("forward"), "reverse", or
  a shuffle seeded by an int.
- **poison_masked**: the masked-off lanes of a ``tl.load`` with no ``other=`` hold poison
  (NaN, or the integer type's maximum) instead of the interpreter's 0.
- **tf32**: an fp32 ``tl.dot`` whose ``input_precision`` is TF32 (the default for fp32
  on NVIDIA GPUs) rounds its operands to TF32 (10-bit mantissa, round to nearest, ties
  away), as the tensor cores do; "ieee" dots stay exact.

Written against Triton 3.6's ``triton.runtime.interpreter`` (``InterpreterBuilder``,
``GridExecutor.__call__``); ``supported()`` says why not where those internals differ.
Where Triton 3.4 to 3.9 differ, the difference is found by looking, never by the
version number:

- ``GridExecutor.pre_run_hooks`` (3.6 and later): run where the executor has them;
- ``_patch_lang`` returns a scope to ``restore()`` (3.6 and later), or None (3.4, 3.5,
  which patch for good);
- a ``warmup=`` keyword reaches ``GridExecutor.__call__`` (3.4, 3.5: a warm-up
  compiles nothing under the interpreter and runs no program), or is handled before it;
- keyword-only kernel arguments are passed on where Triton's own ``__call__`` does (3.9),
  and dropped where it drops them, so a launch fails or runs as a plain one would;
- ``BlockPointerHandle`` (``tl.make_block_ptr``, gone in 3.8) and ``TensorDescHandle``
  (``tl.make_tensor_descriptor``): the pointers each materializes carry the tag of the
  tensor it was made from, for whichever of the two this Triton has;
- the wrapped builder methods pass on whatever arguments they get, positional or by
  keyword (descriptor loads name theirs; 3.9 merged ``cache_modifier`` and
  ``eviction_policy`` into ``cache_policy``), and hand a mask back in the form it came
  in (a ``TensorHandle``, or the bare bool array of a block pointer).
"""

from __future__ import annotations

import functools
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator

from harness.run.patching import Patcher

TAG = "casebook_tensor"  # key in TensorHandle.attr: the tensor argument a pointer came from
MAX_RECORDED = 20_000_000  # accesses recorded per launch by the race detector
LOAD, STORE, ATOMIC = 0, 1, 2
KIND_NAMES = ("load", "store", "atomic")
_PROPAGATE = ("create_addptr", "create_splat", "create_broadcast", "create_expand_dims", "create_reshape",
              "create_trans", "create_select", "create_cat", "create_join", "create_bitcast", "cast_impl",
              "create_int_to_ptr")
_NEEDED = ("InterpreterBuilder", "GridExecutor", "TensorHandle", "_patch_lang", "_implicit_cvt",
           "_get_np_dtype", "interpreter_builder", "InterpreterError")
# Handles whose ``materialize_pointers`` turns a block pointer or a tensor descriptor into
# a tensor of pointers; each is patched where this Triton has it (BlockPointerHandle: 3.7
# and before; TensorDescHandle: all).
_POINTER_HANDLES = ("BlockPointerHandle", "TensorDescHandle")


@dataclass
class Options:
    memcheck: bool = False
    race: bool = False
    order: object = "forward"  # "forward", "reverse" or an int seed
    poison_masked: bool = True
    oob_poison: bool = False  # memcheck: lanes of a load outside its tensor read poison, not other= or 0
    tf32: bool = True
    dry_run: bool = False  # each launch's grid checked against CUDA's limits, no program run


@dataclass
class Span:
    name: str
    lo: int  # first byte of the view
    hi: int  # one past its last byte
    itemsize: int


@dataclass
class Launch:
    kernel: str
    spans: dict
    grid: tuple = (1, 1, 1)
    accesses: list = field(default_factory=list)  # (addresses, pid, kind, line, lockset) for the race detector
    recorded: int = 0
    truncated: bool = False
    # spin locks (race detector): the program running holds ``held`` {address: (token, free value)};
    # ``tokens[t]`` is the lock's address once the program released it (None until then: a CAS that
    # is never undone is no lock); ``locksets[i]`` the tokens held during an access tagged ``i``.
    held: dict = field(default_factory=dict)
    tokens: list = field(default_factory=list)
    locksets: list = field(default_factory=lambda: [frozenset()])
    lockset: int = 0  # the index in ``locksets`` of what the running program holds now


@dataclass
class Recorder:
    """What the instrumented launches saw; plain data, read after the block."""

    options: Options
    launches: int = 0
    programs: dict = field(default_factory=dict)  # kernel -> programs of its latest launch (a dry run's too)
    oob: dict = field(default_factory=dict)  # (kind, tensor, side, line) -> {"lanes", "elements", "pid", ...}
    races: list = field(default_factory=list)
    cross_program: int = 0  # addresses one program wrote (store or atomic) and another touched (race recording)
    atomics: int = 0
    float_atomics: int = 0
    tf32_dots: int = 0
    poisoned_loads: int = 0
    loads: int = 0  # tl.load calls made (a loop's trips count each)
    blocks: dict = field(default_factory=dict)  # constexpr name -> sorted int values seen
    poison_lines: list = field(default_factory=list)  # kernel lines whose masked lanes got poison
    dot_lines: list = field(default_factory=list)  # kernel lines of the tl.dot calls rounded like TF32
    truncated: bool = False
    current: Launch | None = None
    grid_limits: list = field(default_factory=list)  # launches past CUDA's grid limits (check_grid)

    def pid(self) -> tuple:
        from triton.runtime import interpreter as interp

        return tuple(interp.interpreter_builder.grid_idx)


def supported() -> str | None:
    """None where this Triton's interpreter has what the patches need, else why not."""
    try:
        from triton.runtime import interpreter as interp
    except Exception as e:  # noqa: BLE001
        return f"triton.runtime.interpreter cannot be imported: {e}"
    missing = [n for n in _NEEDED if not hasattr(interp, n)]
    if missing:
        return f"this Triton's interpreter lacks {', '.join(missing)}"
    b = interp.InterpreterBuilder
    missing = [n for n in ("create_masked_load", "create_masked_store", "create_dot", "create_atomic_rmw",
                           "create_atomic_cas") if not hasattr(b, n)]
    if missing:
        return f"InterpreterBuilder lacks {', '.join(missing)}"
    missing = [n for n in ("_init_args_hst", "_restore_args_dev") if not hasattr(interp.GridExecutor, n)]
    return f"GridExecutor lacks {', '.join(missing)}" if missing else None


@functools.cache
def _skip_dirs() -> tuple:
    import numpy
    import triton

    here = os.path.dirname(__file__)
    return (os.path.dirname(triton.__file__), os.path.dirname(numpy.__file__), __file__,
            os.path.join(here, "analyses") + os.sep)


def kernel_line() -> str:
    """file:line of the innermost frame outside Triton, NumPy and the instrumented interpreter:
    the kernel's source line."""
    skip = _skip_dirs()
    f = sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename
        if not name.startswith(skip):
            return f"{_short(name)}:{f.f_lineno}"
        f = f.f_back
    return "?"


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def poison_for(np_dtype):
    import numpy as np

    if np.issubdtype(np_dtype, np.floating):
        return np.nan
    if np_dtype == np.bool_:
        return True
    return np.iinfo(np_dtype).max


def tf32_round(a):
    """fp32 values rounded to TF32 (10 mantissa bits), to nearest with ties away from zero."""
    import numpy as np

    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)
    return np.where(np.isfinite(a), rounded, a).astype(np.float32)


def _spans(tensors: dict) -> dict:
    """The byte range of each tensor argument's view (not its whole storage)."""
    import torch

    out = {}
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor) and isinstance(getattr(t, "base", None), torch.Tensor):
            t = t.base  # triton.reinterpret's TensorWrapper
        size = t.element_size()
        lo = hi = t.data_ptr()
        if t.numel():
            lo += size * sum(min(0, (s - 1) * st) for s, st in zip(t.shape, t.stride()))
            hi += size * (1 + sum(max(0, (s - 1) * st) for s, st in zip(t.shape, t.stride())))
        out[name] = Span(name, lo, hi, size)
    return out


def _owner(spans: dict, addr: int) -> tuple[str, int] | None:
    for s in spans.values():
        if s.lo <= addr < s.hi:
            return s.name, (addr - s.lo) // s.itemsize
    return None


def _flat_pid(pid: tuple, grid: tuple) -> int:
    return pid[0] + grid[0] * (pid[1] + grid[1] * pid[2])


def _pid_text(pid: tuple) -> str:
    return str(pid[0]) if pid[1:] == (0, 0) else str(tuple(pid))


def _program_order(grid: tuple, order) -> list:
    import random

    idx = [(x, y, z) for x in range(grid[0]) for y in range(grid[1]) for z in range(grid[2])]
    if order == "reverse":
        idx.reverse()
    elif isinstance(order, int) and not isinstance(order, bool):
        random.Random(order).shuffle(idx)
    return idx


def check_lanes(rec: Recorder, ptrs, mask, kind: int):
    """The active lanes' addresses, and the mask with out-of-bounds lanes removed (memcheck)."""
    import numpy as np

    addrs = np.asarray(ptrs.data).astype(np.uint64, copy=False)
    m = np.broadcast_to(np.asarray(_mask_data(mask), dtype=bool), addrs.shape)
    launch = rec.current
    if launch is None or not rec.options.memcheck or not launch.spans:
        return addrs, m
    size = max(1, ptrs.get_element_ty().primitive_bitwidth // 8)
    name = ptrs.attr.get(TAG)
    a = addrs.astype(np.int64)
    if name in launch.spans:
        s = launch.spans[name]
        bad = m & ((a < s.lo) | (a + size > s.hi))
    else:
        inside = np.zeros(a.shape, dtype=bool)
        for s in launch.spans.values():
            inside |= (a >= s.lo) & (a + size <= s.hi)
        bad = m & ~inside
    if bad.any():
        _record_oob(rec, a[bad], name, kind)
        m = m & ~bad
    return addrs, m


def _mask_data(mask):
    """A mask's lanes: a ``TensorHandle``'s data, or the bare bool array a block pointer's
    ``materialize_pointers`` returns (Triton 3.4 to 3.7)."""
    import numpy as np

    return mask if isinstance(mask, np.ndarray) else mask.data


def _mask_like(TensorHandle, mask, m):
    """The checked lanes ``m`` in the form the interpreter gave ``mask`` in."""
    import numpy as np

    m = np.ascontiguousarray(m)
    return m if isinstance(mask, np.ndarray) else TensorHandle(m, mask.dtype)


def _record_oob(rec: Recorder, bad_addrs, name, kind: int) -> None:
    spans = rec.current.spans
    s = spans.get(name) or min(spans.values(), key=lambda sp: min(abs(int(bad_addrs[0]) - sp.lo),
                                                                 abs(int(bad_addrs[0]) - sp.hi)))
    before = bad_addrs < s.lo
    line = kernel_line()
    for side, sel in (("before the start", before), ("past the end", ~before)):
        if not sel.any():
            continue
        far = int((s.lo - bad_addrs[sel].min()) if side == "before the start" else (bad_addrs[sel].max() - s.hi))
        key = (KIND_NAMES[kind], s.name if name in spans else f"{s.name}?", side, line)
        hit = rec.oob.setdefault(key, {"lanes": 0, "elements": 0, "pid": _pid_text(rec.pid()),
                                       "kernel": rec.current.kernel, "itemsize": s.itemsize})
        hit["lanes"] += int(sel.sum())
        hit["elements"] = max(hit["elements"], far // s.itemsize + (1 if side == "past the end" else 0))


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
    launch.accesses.append((active.ravel().copy(), _flat_pid(rec.pid(), launch.grid), kind, kernel_line(),
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
    pairs = np.unique(np.stack([addrs[sel].astype(np.uint64), locksets[sel].astype(np.uint64)], axis=1), axis=0)
    _, first, counts = np.unique(pairs[:, 0], return_index=True, return_counts=True)
    ids = pairs[:, 1].astype(np.int64)
    guarded = np.array([bool(locks[ids[f]]) for f in first], dtype=bool) & (counts == 1)
    for i in np.flatnonzero(counts > 1):
        sets = [locks[j] for j in ids[first[i]:first[i] + counts[i]]]
        guarded[i] = bool(frozenset.intersection(*sets))
    return guarded


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
    pairs = np.unique(np.stack([addrs.astype(np.uint64), pids.astype(np.uint64)], axis=1), axis=0)
    shared_addrs, n = np.unique(pairs[:, 0], return_counts=True)
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
    pairs = np.unique(np.stack([addrs, pids], axis=1), axis=0)
    shared_addrs, n = np.unique(pairs[:, 0], return_counts=True)
    return int(np.intersect1d(shared_addrs[n > 1], addrs[kinds != LOAD]).size)


def _race(launch: Launch, addr: int, first: int, second: int, total: int) -> dict:
    _, p1, _, line1, _ = launch.accesses[first]
    _, p2, k2, line2, _ = launch.accesses[second]
    owner = _owner(launch.spans, addr)
    where = f"{owner[0]}[{owner[1]}]" if owner else hex(addr)
    unflat = lambda p: _pid_text((p % launch.grid[0], p // launch.grid[0] % launch.grid[1],  # noqa: E731
                                  p // (launch.grid[0] * launch.grid[1])))
    return {"kernel": launch.kernel, "address": where, "store_pid": unflat(p1), "store_line": line1,
            "other_pid": unflat(p2), "other_kind": KIND_NAMES[k2], "other_line": line2, "addresses": total}


def derived_tag(op: str, args, TensorHandle):
    """The tensor a pointer made by the builder method ``op`` from ``args`` points into (None: not one tensor, so the
    pointer is checked against every tensor argument). Most ops derive it from their one tagged
    operand. A ``tl.where`` between pointers into two tensors (``x = tl.where(is_v, v_ptr, q_ptr)``)
    points into the one its condition picks: where the condition is the same in every lane, that
    operand's tensor; where it differs between lanes, no single one."""
    import numpy as np

    tagged = [a for a in args if isinstance(a, TensorHandle) and TAG in a.attr]
    if not tagged:
        return None
    if op == "create_select" and len(args) >= 3:
        cond, lhs, rhs = args[:3]
        tags = {getattr(x, "attr", {}).get(TAG) for x in (lhs, rhs)}
        if len(tags) > 1:
            c = np.asarray(getattr(cond, "data", cond))
            if c.all():
                return getattr(lhs, "attr", {}).get(TAG)
            if not c.any():
                return getattr(rhs, "attr", {}).get(TAG)
            return None
    return tagged[0].attr[TAG]


class _Patches:
    """The patched interpreter methods, closing over one Recorder."""

    def __init__(self, rec: Recorder, patcher: Patcher):
        from triton.runtime import interpreter as interp

        self.rec, self.interp = rec, interp
        self.set = patcher.setattr

    def apply(self) -> None:
        B = self.interp.InterpreterBuilder
        self.set(B, "create_masked_load", self.masked_load(B.create_masked_load))
        self.set(B, "create_masked_store", self.masked_store(B.create_masked_store))
        self.set(B, "create_atomic_rmw", self.atomic_rmw(B.create_atomic_rmw))
        self.set(B, "create_atomic_cas", self.atomic_cas(B.create_atomic_cas))
        self.set(B, "create_dot", self.dot(B.create_dot))
        for name in _PROPAGATE:
            if hasattr(B, name):
                self.set(B, name, self.propagating(getattr(B, name), name))
        for name in _POINTER_HANDLES:
            handle = getattr(self.interp, name, None)
            if handle is not None and hasattr(handle, "materialize_pointers"):
                self.set(handle, "materialize_pointers", self.block_pointers(handle.materialize_pointers))
        self.set(self.interp.GridExecutor, "__call__", grid_call(self.rec, self.interp))

    def propagating(self, original, name: str = ""):
        TensorHandle = self.interp.TensorHandle

        def method(builder, *args, **kwargs):
            out = original(builder, *args, **kwargs)
            if isinstance(out, TensorHandle) and TAG not in out.attr:
                tag = derived_tag(name, args, TensorHandle)
                if tag is not None:
                    out.attr[TAG] = tag
            return out
        return method

    def block_pointers(self, original):
        """``materialize_pointers`` (a block pointer's ``(boundary_check)``, a descriptor's
        ``(offsets)``) whose pointers carry the tag of the handle's base."""
        def method(handle, *args, **kwargs):
            ptrs, masks = original(handle, *args, **kwargs)
            if TAG in getattr(handle.base, "attr", {}):
                ptrs.attr[TAG] = handle.base.attr[TAG]
            return ptrs, masks
        return method

    def masked_load(self, original):
        rec, TensorHandle = self.rec, self.interp.TensorHandle

        def method(builder, ptrs, mask, other=None, *rest, **kwargs):
            import numpy as np

            addrs, m = check_lanes(rec, ptrs, mask, LOAD)
            record_access(rec, addrs, m, LOAD)
            rec.loads += 1
            if other is None and rec.options.poison_masked and not m.all():
                dtype_np = self.interp._get_np_dtype(ptrs.get_element_ty())
                other = TensorHandle(np.full(addrs.shape, poison_for(dtype_np), dtype=dtype_np),
                                     ptrs.get_element_ty())
                rec.poisoned_loads += 1
                _note_line(rec.poison_lines)
            got = original(builder, ptrs, _mask_like(TensorHandle, mask, m), other, *rest, **kwargs)
            if rec.options.oob_poison:  # the lanes memcheck took out of the mask read poison
                outside = np.broadcast_to(np.asarray(_mask_data(mask), dtype=bool), m.shape) & ~m
                if outside.any():
                    got.data[outside] = poison_for(got.data.dtype)
            return got
        return method

    def masked_store(self, original):
        rec, TensorHandle = self.rec, self.interp.TensorHandle

        def method(builder, ptrs, value, mask, *rest, **kwargs):
            addrs, m = check_lanes(rec, ptrs, mask, STORE)
            record_access(rec, addrs, m, STORE)
            return original(builder, ptrs, value, _mask_like(TensorHandle, mask, m), *rest, **kwargs)
        return method

    def atomic_rmw(self, original):
        rec, TensorHandle = self.rec, self.interp.TensorHandle

        def method(builder, op, ptr, val, mask, *rest, **kwargs):
            import numpy as np

            addrs, m = check_lanes(rec, ptr, mask, ATOMIC)
            record_access(rec, addrs, m, ATOMIC)
            rec.atomics += 1
            rec.float_atomics += bool(np.issubdtype(np.asarray(val.data).dtype, np.floating))
            out = original(builder, op, ptr, val, _mask_like(TensorHandle, mask, m), *rest, **kwargs)
            if op == _xchg():
                note_xchg(rec, addrs, m, val)
            return out
        return method

    def atomic_cas(self, original):
        rec, TensorHandle = self.rec, self.interp.TensorHandle

        def method(builder, ptr, cmp, val, *rest, **kwargs):
            import numpy as np

            ones = np.ones(np.shape(ptr.data), dtype=bool)  # a compare-and-swap has no mask: every lane
            addrs, m = check_lanes(rec, ptr, ones, ATOMIC)
            record_access(rec, addrs, m, ATOMIC)
            rec.atomics += 1
            old = original(builder, ptr, cmp, val, *rest, **kwargs)
            note_cas(rec, addrs, m, old, cmp, val)
            return old
        return method

    def dot(self, original):
        rec, TensorHandle = self.rec, self.interp.TensorHandle

        def method(builder, a, b, d, input_precision, *rest, **kwargs):
            from triton._C.libtriton import ir

            if (rec.options.tf32 and input_precision == ir.INPUT_PRECISION.TF32
                    and str(a.dtype.scalar) == "fp32" and str(b.dtype.scalar) == "fp32"):
                a = TensorHandle(tf32_round(a.data), a.dtype.scalar)
                b = TensorHandle(tf32_round(b.data), b.dtype.scalar)
                rec.tf32_dots += 1
                _note_line(rec.dot_lines)
            return original(builder, a, b, d, input_precision, *rest, **kwargs)
        return method


def grid_call(rec: Recorder, interp):
    """``GridExecutor.__call__`` as in Triton 3.6, with the launch recorded and the program order
    chosen; what differs in 3.4 to 3.9 is handled where it is seen (the module's docstring)."""
    import inspect

    import triton

    keeps_kwonly = _keeps_kwonly(interp.GridExecutor.__call__)

    def __call__(self, *args_dev, **kwargs):
        argspec = inspect.getfullargspec(self.fn)
        if "warmup" not in argspec.args and kwargs.pop("warmup", False):
            return  # Triton 3.4, 3.5: InterpretedFunction.run passes warmup= on; a warm-up runs nothing
        names = set(argspec.args) | (set(argspec.kwonlyargs) if keeps_kwonly else set())
        kwargs = {k: v for k, v in kwargs.items() if k in names}
        args_hst, kwargs_hst = self._init_args_hst(args_dev, kwargs)
        for hook in getattr(self, "pre_run_hooks", ()):  # Triton 3.6 and later
            hook(*args_hst, **kwargs_hst)
        patch_scope = interp._patch_lang(self.fn)  # None before 3.6: patched for good
        try:
            args = inspect.getcallargs(self.fn, *args_hst, **kwargs_hst)
            tensors = {n: a for n, a in args.items() if hasattr(a, "data_ptr") and n not in self.constexprs}
            _note_blocks(rec, {n: a for n, a in args.items() if n in self.constexprs})
            args = {n: a if n in self.constexprs else interp._implicit_cvt(a) for n, a in args.items()}
            for n in tensors:
                args[n].handle.attr[TAG] = n
            grid = self.grid(args) if callable(self.grid) else self.grid
            grid = tuple(grid) + (1,) * (3 - len(grid))
            check_grid(rec, getattr(self.fn, "__name__", "?"), grid)  # past CUDA's limits: raises
            # the latest launch of each kernel: autotune's benchmarking launches come before the real one
            rec.programs[getattr(self.fn, "__name__", "?")] = int(grid[0]) * int(grid[1]) * int(grid[2])
            if rec.options.dry_run:
                return
            interp.interpreter_builder.set_grid_dim(*grid)
            rec.current = Launch(getattr(self.fn, "__name__", "?"), _spans(tensors), grid)
            rec.launches += 1
            try:
                with Patcher() as launch:
                    launch.setattr(interp, "_patch_lang", patched_once(interp._patch_lang, self.fn))
                    for idx in _program_order(grid, rec.options.order):
                        interp.interpreter_builder.set_grid_idx(*idx)
                        program_starts(rec.current)
                        self.fn(**args)
            except Exception as e:
                if triton.knobs.compilation.front_end_debugging:
                    raise
                raise interp.InterpreterError(repr(e)) from e
            if rec.options.race:
                rec.races.extend(find_races(rec.current))
                rec.cross_program += cross_program_writes(rec.current)
        finally:
            rec.current = None
            if patch_scope is not None:
                patch_scope.restore()
        self._restore_args_dev(args_dev, args_hst, kwargs, kwargs_hst)
    return __call__


def patched_once(patch_lang, kernel):
    """``_patch_lang`` for the programs of one launch: the interpreter patches ``triton.language``
    again at every call of a ``@triton.jit`` function from the kernel (``inspect.getmembers`` over
    the whole module, about a millisecond each; a third of the time of a kernel that calls a small
    helper in its loops), and drops what that returns. Within one launch nothing undoes the patch,
    so each function's first call patches and later calls of it do nothing (the launch's own
    patch, of ``kernel``, is already in place)."""
    done = {id(kernel)}

    def once(fn, *args, **kwargs):
        if id(fn) in done:
            return None
        done.add(id(fn))
        return patch_lang(fn, *args, **kwargs)
    once.casebook_patched_once = True
    return once


GRID_LIMITS = (2**31 - 1, 65_535, 65_535)  # CUDA's programs per grid axis (x, y, z)


class GridLimitError(RuntimeError):
    """A launch whose grid CUDA would refuse ("invalid argument"); raised before any program runs."""

    def __init__(self, hit: dict):
        self.hit = hit
        super().__init__(grid_limit_text(hit))


def grid_limit_text(hit: dict) -> str:
    return (f"{hit['kernel']}: grid {hit['grid']} has {hit['programs']:,} programs on axis {hit['axis']}, "
            f"CUDA allows at most {hit['limit']:,} (launched at {hit['line']})")


def check_grid(rec: Recorder, kernel: str, grid: tuple) -> None:
    """Record and refuse a launch with more programs on an axis than CUDA allows (the interpreter has no limit)."""
    for axis, (n, limit) in enumerate(zip(grid, GRID_LIMITS)):
        n = int(n) if hasattr(n, "__index__") else n
        if isinstance(n, int) and n > limit:
            hit = {"kernel": kernel, "axis": axis, "grid": tuple(grid), "programs": n, "limit": limit,
                   "line": kernel_line()}
            rec.grid_limits.append(hit)
            raise GridLimitError(hit)


def _keeps_kwonly(call) -> bool:
    """Whether Triton's own ``GridExecutor.__call__`` passes keyword-only kernel arguments on
    (3.9 and later) rather than dropping them: read from its code, so that an instrumented
    launch accepts exactly the kernels a plain one does."""
    import inspect

    try:
        return "kwonlyargs" in inspect.getsource(call)
    except (OSError, TypeError):
        return True


def _xchg():
    from triton._C.libtriton import ir

    return ir.ATOMIC_OP.XCHG


def _note_line(lines: list) -> None:
    line = kernel_line()
    if line not in lines:
        lines.append(line)


def _note_blocks(rec: Recorder, constexprs: dict) -> None:
    for name, v in constexprs.items():
        v = getattr(v, "value", v)
        if isinstance(v, int) and not isinstance(v, bool) and v > 1 and v & (v - 1) == 0:
            rec.blocks[name] = sorted(set(rec.blocks.get(name, [])) | {v})


@contextmanager
def instrumented(options: Options | None = None) -> Iterator[Recorder]:
    """Patch the interpreter for the block (see the module's docstring); yield what it records."""
    why = supported()
    if why is not None:
        import triton

        raise RuntimeError(f"not available with triton {getattr(triton, '__version__', '?')}: {why}")
    rec = Recorder(options or Options())
    with Patcher() as patcher:
        _Patches(rec, patcher).apply()
        yield rec
