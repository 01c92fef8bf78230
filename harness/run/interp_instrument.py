"""An instrumented Triton interpreter: memory checking, race recording, program order,
poison in masked lanes and TF32 rounding, applied for one block and undone after it.

``instrumented(...)`` is the one entry point. Inside the block, every launch of an
interpreted kernel (``TRITON_INTERPRET=1``) runs with the analyses whose option is on (each a
module of ``harness.run.analyses``, called by the patched interpreter methods here through the
``Analysis`` hooks; this module only tags pointers, orders programs and records launches):

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
  program) are no race. Atomics on a scalar pointer are one lane. With it, the lanes of one
  program over each other (``analyses.lanes``): a store whose lanes write one address with
  different values, and a load of what other lanes stored since the last ``tl.debug_barrier()``.
- **order**: the programs of a grid run in program-id order ("forward"), "reverse", or
  a shuffle seeded by an int.
- **poison_masked**: the masked-off lanes of a ``tl.load`` with no ``other=`` hold poison
  (NaN, or the integer type's maximum) instead of the interpreter's 0.
- **tf32**: an fp32 ``tl.dot`` whose ``input_precision`` is TF32 (the default for fp32
  on NVIDIA GPUs) rounds its operands to TF32 (10-bit mantissa, round to nearest, ties
  away), as the tensor cores do; "ieee" dots stay exact.
- **int_wrap**: every signed integer ``+``, ``-``, ``*`` of 32 bits or fewer in the kernel's
  lines checked in 64 bits (``analyses.intwrap``, through ``Analysis.arith``).
- **fresh_tuning**: every autotuned launch tunes afresh (``analyses.tuning``, through
  ``Analysis.autotune``); ``hooked(...)`` installs this one alone, on any backend.

The arithmetic and autotuner hook points are installed only for a block that turns on an
analysis implementing them (``asked``). An analysis never patches Triton itself: it implements
hooks, and this module installs them through the block's one ``Patcher``.

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

from contextlib import contextmanager
from typing import Iterator

from harness.run.analyses.base import (ATOMIC, KIND_NAMES, LOAD, STORE, TAG, Analysis, Launch,  # noqa: F401
                                       Options, Recorder, Span, kernel_line, mask_data, short_path, view_span)
from harness.run.analyses.intwrap import IntWrap
from harness.run.analyses.lanes import Lanes
from harness.run.analyses.memcheck import Memcheck
from harness.run.analyses.poison import Poison
from harness.run.analyses.races import Races, cross_program_writes, find_races  # noqa: F401
from harness.run.analyses.tf32 import TF32
from harness.run.analyses.tuning import FreshTuning
from harness.run.patching import Patcher

_PROPAGATE = ("create_addptr", "create_splat", "create_broadcast", "create_expand_dims", "create_reshape",
              "create_trans", "create_select", "create_cat", "create_join", "create_bitcast", "cast_impl",
              "create_int_to_ptr")
_ARITH = {"create_add": "add", "create_sub": "subtract", "create_mul": "multiply",  # -> Analysis.arith's op
          "create_shl": "left_shift", "create_ashr": "right_shift", "create_lshr": "right_shift"}
_NEEDED = ("InterpreterBuilder", "GridExecutor", "TensorHandle", "_patch_lang", "_implicit_cvt",
           "_get_np_dtype", "interpreter_builder", "InterpreterError")
# Handles whose ``materialize_pointers`` turns a block pointer or a tensor descriptor into
# a tensor of pointers; each is patched where this Triton has it (BlockPointerHandle: 3.7
# and before; TensorDescHandle: all).
_POINTER_HANDLES = ("BlockPointerHandle", "TensorDescHandle")


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


def _spans(tensors: dict) -> dict:
    """The byte range of each tensor argument's view (not its whole storage)."""
    import torch

    out = {}
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor) and isinstance(getattr(t, "base", None), torch.Tensor):
            t = t.base  # triton.reinterpret's TensorWrapper
        lo, hi = view_span(t)
        out[name] = Span(name, lo, hi, t.element_size())
    return out


def _program_order(grid: tuple, order) -> list:
    import random

    idx = [(x, y, z) for x in range(grid[0]) for y in range(grid[1]) for z in range(grid[2])]
    if order == "reverse":
        idx.reverse()
    elif isinstance(order, int) and not isinstance(order, bool):
        random.Random(order).shuffle(idx)
    return idx


def _mask_like(TensorHandle, mask, m):
    """The checked lanes ``m`` in the form the interpreter gave ``mask`` in."""
    import numpy as np

    m = np.ascontiguousarray(m)
    return m if isinstance(mask, np.ndarray) else TensorHandle(m, mask.dtype)


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
        if hasattr(B, "create_barrier"):
            self.set(B, "create_barrier", self.barrier(B.create_barrier))
        for name in _PROPAGATE:
            if hasattr(B, name):
                self.set(B, name, self.propagating(getattr(B, name), name))
        for name in _POINTER_HANDLES:
            handle = getattr(self.interp, name, None)
            if handle is not None and hasattr(handle, "materialize_pointers"):
                self.set(handle, "materialize_pointers", self.block_pointers(handle.materialize_pointers))
        if asked(self.rec, "arith"):
            for name, op in _ARITH.items():
                if hasattr(B, name):
                    self.set(B, name, self.arith(getattr(B, name), op))
        self.set(self.interp.GridExecutor, "__call__", grid_call(self.rec, self.interp))

    def arith(self, original, op: str):
        rec = self.rec

        def method(builder, lhs, rhs, *rest, **kwargs):
            out = original(builder, lhs, rhs, *rest, **kwargs)
            for a in rec.active:
                a.arith(rec, op, lhs, rhs, out)
            return out
        return method

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
            addrs, m = _access(rec, ptrs, mask, LOAD)
            rec.loads += 1
            for a in rec.active:
                other = a.load(rec, ptrs, addrs, m, other)
            got = original(builder, ptrs, _mask_like(TensorHandle, mask, m), other, *rest, **kwargs)
            for a in rec.active:
                got = a.loaded(rec, mask, m, got)
            return got
        return method

    def masked_store(self, original):
        rec, TensorHandle = self.rec, self.interp.TensorHandle

        def method(builder, ptrs, value, mask, *rest, **kwargs):
            addrs, m = _access(rec, ptrs, mask, STORE)
            for a in rec.active:
                a.store(rec, ptrs, addrs, m, value)
            return original(builder, ptrs, value, _mask_like(TensorHandle, mask, m), *rest, **kwargs)
        return method

    def atomic_rmw(self, original):
        rec, TensorHandle = self.rec, self.interp.TensorHandle

        def method(builder, op, ptr, val, mask, *rest, **kwargs):
            import numpy as np

            addrs, m = _access(rec, ptr, mask, ATOMIC)
            rec.atomics += 1
            rec.float_atomics += bool(np.issubdtype(np.asarray(val.data).dtype, np.floating))
            out = original(builder, op, ptr, val, _mask_like(TensorHandle, mask, m), *rest, **kwargs)
            for a in rec.active:
                a.atomic(rec, op, addrs, m, val)
            return out
        return method

    def atomic_cas(self, original):
        rec = self.rec

        def method(builder, ptr, cmp, val, *rest, **kwargs):
            import numpy as np

            ones = np.ones(np.shape(ptr.data), dtype=bool)  # a compare-and-swap has no mask: every lane
            addrs, m = _access(rec, ptr, ones, ATOMIC)
            rec.atomics += 1
            old = original(builder, ptr, cmp, val, *rest, **kwargs)
            for a in rec.active:
                a.cas(rec, addrs, m, old, cmp, val)
            return old
        return method

    def barrier(self, original):
        rec = self.rec

        def method(builder, *args, **kwargs):
            for a in rec.active:
                a.barrier(rec)
            return original(builder, *args, **kwargs)
        return method

    def dot(self, original):
        rec = self.rec

        def method(builder, a, b, d, input_precision, *rest, **kwargs):
            for analysis in rec.active:
                a, b = analysis.dot(rec, a, b, input_precision)
            return original(builder, a, b, d, input_precision, *rest, **kwargs)
        return method


def asked(rec: Recorder, hook: str) -> bool:
    """Whether an analysis of the block that overrides ``hook`` is on: the arithmetic and autotuner
    hooks are installed only then (every integer operation of every program would pass through
    the arithmetic one), so turning such an analysis on later in the block does not install them."""
    return any(getattr(type(a), hook) is not getattr(Analysis, hook) and a.on(rec.options) for a in rec.analyses)


def autotuner_hook(rec: Recorder, patcher: Patcher) -> None:
    """``Autotuner.run`` calling each analysis on now (``Analysis.autotune``) before the launch, where one asks."""
    if not asked(rec, "autotune"):
        return
    from triton.runtime.autotuner import Autotuner

    original = Autotuner.run

    def run(tuner, *args, **kwargs):
        for a in rec.analyses:
            if a.on(rec.options):
                a.autotune(rec, tuner)
        return original(tuner, *args, **kwargs)

    patcher.setattr(Autotuner, "run", run)


def _access(rec: Recorder, ptrs, mask, kind: int):
    """The addresses of a load, store or atomic, and its lanes as the active analyses leave them
    (memcheck takes out-of-bounds lanes out; the race detector records them)."""
    import numpy as np

    addrs = np.asarray(ptrs.data).astype(np.uint64, copy=False)
    m = np.broadcast_to(np.asarray(mask_data(mask), dtype=bool), addrs.shape)
    for a in rec.active:
        m = a.access(rec, ptrs, addrs, m, kind)
    return addrs, m


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
            rec.active = [a for a in rec.analyses if a.on(rec.options)]
            try:
                with Patcher() as launch:
                    launch.setattr(interp, "_patch_lang", patched_once(interp._patch_lang, self.fn))
                    for idx in _program_order(grid, rec.options.order):
                        interp.interpreter_builder.set_grid_idx(*idx)
                        for a in rec.active:
                            a.program_starts(rec)
                        self.fn(**args)
            except Exception as e:
                if triton.knobs.compilation.front_end_debugging:
                    raise
                raise interp.InterpreterError(repr(e)) from e
            for a in rec.active:
                try:
                    a.launch_ends(rec)
                except Exception as e:  # noqa: BLE001  the analysis's own failure, not the kernel's: the launch stands
                    rec.failed.append(f"{a.name}: {type(e).__name__}: {e}"[:200])
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


def _note_blocks(rec: Recorder, constexprs: dict) -> None:
    for name, v in constexprs.items():
        v = getattr(v, "value", v)
        if isinstance(v, int) and not isinstance(v, bool) and v > 1 and v & (v - 1) == 0:
            rec.blocks[name] = sorted(set(rec.blocks.get(name, [])) | {v})


def default_analyses() -> list[Analysis]:
    """One of each analysis, in the order the patched methods call them (memcheck takes a lane out
    before the race detector records it)."""
    return [Memcheck(), Races(), Lanes(), Poison(), TF32(), IntWrap(), FreshTuning()]


def _recorder(options: Options | None, analyses: list[Analysis] | None) -> Recorder:
    rec = Recorder(options or Options(), analyses=default_analyses() if analyses is None else list(analyses))
    rec.active = [a for a in rec.analyses if a.on(rec.options)]
    return rec


@contextmanager
def instrumented(options: Options | None = None, analyses: list[Analysis] | None = None) -> Iterator[Recorder]:
    """Patch the interpreter for the block (see the module's docstring); yield what it records.
    ``analyses``: instead of ``default_analyses()`` (each runs where its option is on)."""
    why = supported()
    if why is not None:
        import triton

        raise RuntimeError(f"not available with triton {getattr(triton, '__version__', '?')}: {why}")
    rec = _recorder(options, analyses)
    with Patcher() as patcher:
        _Patches(rec, patcher).apply()
        autotuner_hook(rec, patcher)
        yield rec


@contextmanager
def hooked(options: Options | None = None, analyses: list[Analysis] | None = None) -> Iterator[Recorder]:
    """Only the analyses' hooks that hold on every backend (``Analysis.autotune``) for the block,
    the interpreter left as it is: what a run on a GPU can have. Yields the Recorder."""
    rec = _recorder(options, analyses)
    with Patcher() as patcher:
        autotuner_hook(rec, patcher)
        yield rec
