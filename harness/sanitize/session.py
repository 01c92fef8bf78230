"""The sanitizer inside the user's process: every launch of every ``@triton.jit`` kernel run
by the instrumented interpreter (``harness.run.interp_instrument``) and judged, launch by launch.

``Session(config)`` is a context: on entering it sets ``TRITON_INTERPRET=1`` (kernels decorated
from then on are interpreted; a kernel compiled before is interpreted too, through
``JITFunction.run``), applies the interpreter fixes of ``triton_compat.patched`` (autotune on the
CPU, each config timed by one run; list grids, ``and``/``or`` between masks, libdevice, float and bool
arguments), fakes CUDA where there is no GPU
(``fakecuda``), and wraps each launch. A launch is run with:

- memcheck: each load, store and atomic lane outside the tensor its pointer came from is
  recorded and not performed (a load reads poison, a store is dropped), so the process never
  corrupts its heap;
- race: a plain store to an address another program of the launch also touches (where only
  stores meet there and every program order tried gives the same result, the programs stored
  the same value: a warning);
- masked lanes: a ``tl.load`` without ``other=`` reads poison (NaN, the integer maximum) in its
  masked-off lanes. Where that poison may have reached a tensor (a new NaN in a float tensor,
  or a tensor that is not float), the launch is run again from the same inputs with 0 there,
  the plain interpreter's value, and the program goes on with that run; tensors that differ
  mean those lanes entered the result (a warning, the probe's P203). Elsewhere the poisoned
  run is kept: it holds what a run with 0 would;
- ``orders`` (opt-in): the launch again in reversed and shuffled program order, compared;
- ``tf32`` (opt-in): fp32 ``tl.dot`` rounded like TF32, as on an NVIDIA GPU.

What each launch showed is a list of plain dicts (``hits``); ``harness.sanitize.findings``
turns them into findings.
"""

from __future__ import annotations

import functools
import os
import sys
from contextlib import ExitStack
from dataclasses import dataclass

from harness.run.patching import Patcher

SHUFFLE_SEED = 0


@dataclass
class Config:
    memcheck: bool = True
    race: bool = True
    masked: bool = True  # the masked-lane check (two runs where a load without other= had masked lanes)
    tf32: bool = False
    orders: bool = False
    fake_cuda: str = "auto"  # "auto" (where torch sees no GPU), "on", "off"
    checks: bool = True  # False: the baseline (``--no-checks``): CUDA faked and the interpreter's fixes, each
    #                      launch run as the plain interpreter runs it, nothing instrumented or judged


class Session:
    def __init__(self, config: Config | None = None, root: str | None = None, sink: "Sink | None" = None):
        self.config = config or Config()
        self.sink = sink
        self.root = os.path.abspath(root) if root else None  # the test file or script: its line is named
        self.context = ""  # the test running now (pytest node id), or ""
        self.hits: list[dict] = []
        self.launches = 0
        self.rec = None
        self._stack: ExitStack | None = None

    def __enter__(self) -> "Session":
        stack = ExitStack()
        stack.enter_context(Patcher()).setitem(os.environ, "TRITON_INTERPRET", "1")
        try:
            self._install(stack)
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return self

    def __exit__(self, *exc) -> bool:
        if self._stack is not None:
            self._stack.close()
            self._stack = None
        return False

    def _install(self, stack: ExitStack) -> None:
        from harness.run import interp_instrument as I
        from harness.run import triton_compat
        from harness.run.analyses.races import Races, cross_program_writes, find_races

        stack.enter_context(triton_compat.patched(interpreter=True))
        bench_once(stack.enter_context(Patcher()))
        if self._fake_cuda():
            from harness.sanitize import fakecuda

            stack.callback(fakecuda.install())
        c = self.config
        if not c.checks:  # the baseline: what a test does here without the checks is the suite's own
            patcher = stack.enter_context(Patcher())
            patcher.setattr(_executor(), "__call__", counting_wrapper(self, _executor().__call__))
            _interpret_compiled(patcher)
            return
        options = I.Options(memcheck=c.memcheck, race=c.race, poison_masked=c.masked, tf32=c.tf32)
        races = Races(find=quick_races(find_races, [], (I.STORE,)),
                      shared=quick_races(cross_program_writes, 0, (I.STORE, I.ATOMIC)))
        analyses = [races if a.name == races.name else a for a in I.default_analyses()]
        self.rec = stack.enter_context(I.instrumented(options, analyses))
        patcher = stack.enter_context(Patcher())  # on top of the instrumented interpreter's patches
        patcher.setattr(_executor(), "__call__", launch_wrapper(self, _executor().__call__))
        _interpret_compiled(patcher)

    def _fake_cuda(self) -> bool:
        if self.config.fake_cuda != "auto":
            return self.config.fake_cuda == "on"
        import torch

        return not torch.cuda.is_available()

    def record(self, hits: list[dict]) -> None:
        self.hits.extend(hits)
        if self.sink is not None:
            self.sink.write(hits)

    def close_sink(self) -> None:
        if self.sink is not None:
            self.sink.close(self.launches)
            self.sink = None

    def taken(self) -> list[dict]:
        """The hits so far, and forget them (a pytest test takes its own)."""
        out, self.hits = self.hits, []
        return out


class Sink:
    """Hits as JSON lines, written as they are made (a process that dies keeps what it found), and
    a last line with the number of launches."""

    def __init__(self, path: str):
        self.file = open(path, "a", encoding="utf-8")

    def write(self, hits: list[dict]) -> None:
        import json

        for hit in hits:
            self.file.write(json.dumps({"hit": hit}, default=str) + "\n")
        self.file.flush()

    def close(self, launches: int) -> None:
        import json

        self.file.write(json.dumps({"launches": launches}) + "\n")
        self.file.close()


def read_sink(path: str) -> tuple[list[dict], int | None]:
    """The hits a sink holds, and its launch count (None: the process ended before writing it)."""
    import json

    hits, launches = [], None
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    d = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a process that died
                if "hit" in d:
                    hits.append(d["hit"])
                elif "launches" in d:
                    launches = (launches or 0) + int(d["launches"])
    except FileNotFoundError:
        pass
    return hits, launches


def quick_races(original, nothing, kinds: tuple):
    """``interp_instrument.find_races`` (or another per-launch analysis of the recorded accesses
    that concerns only addresses written by an access of ``kinds`` and finds ``nothing`` unless
    one is touched by two programs), made quick: the original sorts every (address, program) row
    of the launch, most of a launch's time. Here only the accesses to written addresses are kept;
    where none of those is touched by two programs the answer is ``nothing``, else the original
    runs on those accesses alone. Either way the result is the original's."""
    def quick(launch, *args, **kwargs):
        if not launch.accesses or not _may_share(launch, kinds):
            return nothing
        written = _written_only(launch, kinds)
        return nothing if written is None else original(written, *args, **kwargs)
    return quick


MAX_OWNED = 2**25  # elements of the written tensors ``_may_share`` keeps two int32 arrays for (256 MiB)


def _may_share(launch, kinds: tuple) -> bool:
    """False where no element that an access of ``kinds`` writes is touched by two programs: every
    access at once, each address placed in its tensor, the lowest and highest program that touched
    each element of the written tensors (arrays as long as those tensors; element granularity:
    two accesses to one element, even to different bytes of it, count as shared). True where some
    element is, or where that cannot be told this way (an address outside every tensor argument,
    tensors too large). Asked twice per launch (races, shared writes): the answer is kept."""
    present = {k for _, _, k, *_ in launch.accesses}
    key = tuple(k for k in kinds if k in present)
    kept = launch.__dict__.setdefault("_casebook_may_share", {})
    if key not in kept:
        kept[key] = _touched_by_two(launch, key)
    return kept[key]


def _touched_by_two(launch, kinds: tuple) -> bool:
    import numpy as np

    acc, spans = launch.accesses, sorted(launch.spans.values(), key=lambda sp: sp.lo)
    if not kinds:
        return False
    if not spans or launch.grid[0] * launch.grid[1] * launch.grid[2] >= 2**31:  # no tensor; program ids past int32
        return True
    sizes = np.fromiter((a.size for a, *_ in acc), dtype=np.int64, count=len(acc))
    addrs = np.concatenate([a for a, *_ in acc]).astype(np.int64)
    pids = np.repeat(np.fromiter((p for _, p, *_ in acc), dtype=np.int32, count=len(acc)), sizes)
    writes = np.repeat(np.fromiter((k in kinds for _, _, k, *_ in acc), dtype=bool, count=len(acc)), sizes)
    los, his, items = (np.array([getattr(sp, f) for sp in spans], dtype=np.int64) for f in ("lo", "hi", "itemsize"))
    at = np.searchsorted(los, addrs, side="right") - 1
    if (at < 0).any() or (addrs >= his[np.maximum(at, 0)]).any():  # outside every tensor
        return True
    start, total = np.full(len(spans), -1, dtype=np.int64), 0
    for s in np.unique(at[writes]):  # one dense run of elements per written tensor
        start[s], total = total, total + int((his[s] - los[s]) // items[s]) + 1
    if total > MAX_OWNED:
        return True
    keep = start[at] >= 0
    at = at[keep]
    g = start[at] + (addrs[keep] - los[at]) // items[at]
    written = np.zeros(total, dtype=bool)
    written[g[writes[keep]]] = True
    low, high = np.full(total, np.iinfo(np.int32).max, dtype=np.int32), np.full(total, -1, dtype=np.int32)
    np.minimum.at(low, g, pids[keep])
    np.maximum.at(high, g, pids[keep])
    return bool((written & (high > low)).any())


def _written_only(launch, kinds: tuple):
    """``launch`` with only its accesses to addresses that some access of ``kinds`` writes, or
    None where no such address is touched by two programs."""
    import dataclasses

    import numpy as np

    writes = [a for a, _, k, *_ in launch.accesses if k in kinds]
    if not writes:
        return None
    written = np.unique(np.concatenate(writes).astype(np.int64))
    kept = []
    for a, p, *rest in launch.accesses:
        i = np.searchsorted(written, a.astype(np.int64, copy=False))
        i[i == written.size] = 0
        m = written[i] == a.astype(np.int64, copy=False)
        if m.any():
            kept.append((a[m], p, *rest))
    addrs = np.concatenate([a for a, *_ in kept]).astype(np.int64)
    pids = np.concatenate([np.full(a.size, p, dtype=np.int64) for a, p, *_ in kept])
    lo, n = int(addrs.min()), int(pids.max()) + 1
    if (int(addrs.max()) - lo + 1) * n < 2**62:  # an (address, program) pair fits one integer
        at = np.unique((addrs - lo) * n + pids) // n
        if not (at[1:] == at[:-1]).any():
            return None
    return dataclasses.replace(launch, accesses=kept)


def bench_once(patcher: Patcher) -> None:
    """``@triton.autotune`` times each config by one run (``fakecuda.do_bench_once``), not by the
    many runs of ``triton_compat.do_bench_cpu``: every config is still launched and checked, and a
    timing means nothing under the interpreter. A benchmarker the kernel's author passed is kept.
    Undone with ``patcher``."""
    from harness.run.triton_compat import autotune_benchmarker
    from harness.sanitize.fakecuda import do_bench_once

    autotune_benchmarker(do_bench_once, patcher)


def _executor():
    from triton.runtime import interpreter

    return interpreter.GridExecutor


def _interpret_compiled(patcher: Patcher) -> None:
    """A kernel decorated before ``TRITON_INTERPRET=1`` was set (a ``JITFunction``) is launched
    through an interpreted copy of itself, until ``patcher`` is undone."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    def run(self, *args, grid, warmup, **kwargs):
        interp = self.__dict__.get("_casebook_interpreted")
        if interp is None:
            interp = self._casebook_interpreted = InterpretedFunction(self.fn)
        return interp.run(*args, grid=grid, warmup=warmup, **kwargs)

    patcher.setattr(JITFunction, "run", run)


# ---------------------------------------------------------------- one launch

def counting_wrapper(session: Session, inner):
    """``GridExecutor.__call__`` as the plain interpreter has it, each launch that ran counted."""
    def __call__(executor, *args_dev, **kwargs):
        out = inner(executor, *args_dev, **kwargs)
        session.launches += 1
        return out
    return __call__


def launch_wrapper(session: Session, inner):
    """``GridExecutor.__call__`` (already instrumented) with each launch judged."""
    def __call__(executor, *args_dev, **kwargs):
        where = launch_site(session.root)
        launch = Launch(session, getattr(executor.fn, "__name__", "?"), _tensors(args_dev, kwargs))
        run = lambda: inner(executor, *args_dev, **kwargs)  # noqa: E731
        try:
            try:
                launch.first(run, where)
            except Exception as e:  # the launch raised: not checked; the user's code sees the exception
                launch.raised(e)
                raise
            session.launches += 1  # checked: it ran
            if launch.races and not session.config.orders:
                launch.same_value(run)
            if launch.poisoned and session.config.masked:
                launch.masked_lanes(run)
            if session.config.orders and launch.tensors:
                launch.orders(run)
        finally:
            launch.hits()
            session.record([{**hit, **where, "test": session.context} for hit in launch.found])
    return __call__


class Launch:
    """One launch: its tensors before it ran, what the instrumented run recorded, the re-runs."""

    def __init__(self, session: Session, kernel: str, tensors: list):
        self.session, self.rec, self.kernel, self.tensors = session, session.rec, kernel, tensors
        cfg = session.config
        self.pre = [t.clone() for t in tensors] if (cfg.masked or cfg.orders) else None
        self.poisoned = False
        self.order_free = False  # its store-store races leave the result the same in every order tried
        self.found: list[dict] = []
        self.float_atomics = 0

    def first(self, run, where: dict) -> None:
        """The instrumented run: bounds, races, poison in masked lanes; what it recorded, kept. A
        grid CUDA would refuse raises, as the launch would on a GPU, naming the user's line."""
        from harness.run.interp_instrument import GridLimitError

        rec = self.rec
        kept = (rec.oob, rec.races, list(rec.poison_lines), list(rec.dot_lines), rec.poisoned_loads,
                rec.float_atomics)
        rec.oob, rec.races = {}, []
        rec.poison_lines.clear()
        rec.dot_lines.clear()
        try:
            run()
        except GridLimitError as e:
            self.found.append({"code": "P403", "kernel": self.kernel, "line": "", "axis": e.hit["axis"],
                               "grid": list(e.hit["grid"]), "programs_on_axis": e.hit["programs"],
                               "limit": e.hit["limit"]})
            raise GridLimitError({**e.hit, "line": where["launched_at"]}) from None
        finally:
            self.oob, self.races = rec.oob, rec.races
            self.poison_lines, self.dot_lines = list(rec.poison_lines), list(rec.dot_lines)
            self.poisoned = rec.poisoned_loads > kept[4]
            self.float_atomics = rec.float_atomics - kept[5]
            rec.oob = {**kept[0], **rec.oob}
            rec.races = kept[1] + rec.races
            rec.poison_lines[:] = list(dict.fromkeys(kept[2] + self.poison_lines))
            rec.dot_lines[:] = list(dict.fromkeys(kept[3] + self.dot_lines))

    def raised(self, e: BaseException) -> None:
        """A launch that raised before it finished (the interpreter or the kernel's own code): a note
        that it was not checked (a grid past CUDA's limit is its own finding, P403)."""
        from harness.errors import error_line
        from harness.run.interp_instrument import GridLimitError

        if not isinstance(e, GridLimitError):
            self.found.append({"code": "P001", "kernel": self.kernel, "line": "",
                               "message": f"{self.kernel}: the launch raised {error_line(e)}"[:300]
                                          + " (not checked: it did not run to its end)"})

    def hits(self) -> None:
        """What the first run recorded, as hits (before the re-runs' own)."""
        for (kind, tensor, side, line), hit in sorted(self.oob.items(), key=lambda kv: kv[0][3]):
            self.found.append({"code": OOB_CODES[kind], "kernel": hit["kernel"], "line": line, "kind": kind,
                               "tensor": tensor, "side": side, "elements": hit["elements"], "lanes": hit["lanes"],
                               "programs": [hit["pid"]]})
        seen = set()
        for r in self.races:
            if (r["store_line"], r["other_line"]) in seen:
                continue
            seen.add((r["store_line"], r["other_line"]))
            self.found.append({"code": "P301", "kernel": r["kernel"], "line": r["store_line"],
                               "other_line": r["other_line"], "other_kind": r["other_kind"],
                               "address": r["address"], "addresses": r["addresses"],
                               "programs": [r["store_pid"], r["other_pid"]],
                               **({"severity": "warning", "same_value": True} if self.order_free else {})})
        for line in self.dot_lines:
            self.found.append({"code": "P204", "kernel": self.kernel, "line": line})

    def _rerun(self, run, **options) -> list:
        """The launch again from the inputs it started with, nothing recorded; its tensors after."""
        rec = self.rec
        for t, p in zip(self.tensors, self.pre):
            _restore(t, p)
        with Patcher() as patcher:
            for k, v in options.items():
                patcher.setattr(rec.options, k, v)
            patcher.setattr(rec, "oob", {})
            patcher.setattr(rec, "races", [])
            run()
        return self.tensors

    def poison_may_show(self) -> bool:
        """Whether poison in masked lanes may have reached a tensor: a float tensor holding a NaN it
        did not hold before, or one that held NaN before and holds NaN still (a NaN-prefilled
        output: the poison's NaN would not be new there), or any tensor that is not float (an
        integer's poison leaves no mark). Where not, the poisoned run is as good as one with 0 and
        is kept without a second run."""
        for t, p in zip(self.tensors, self.pre):
            if not t.is_floating_point():
                return True
            now = t.isnan()
            if bool((now & ~p.isnan()).any()) or bool((now & p.isnan()).any()):
                return True
        return False

    def masked_lanes(self, run) -> None:
        """Run again with 0 in the masked lanes; what differs from the poisoned run entered the result."""
        if not self.poison_may_show():
            return
        poisoned = [t.clone() for t in self.tensors]
        self._rerun(run, poison_masked=False, race=False)
        diff = _differences(self.tensors, poisoned)
        if diff:
            lines = self.poison_lines or ["?"]
            self.found.append({"code": "P203", "kernel": self.kernel, "line": lines[0], "lines": lines,
                               "differ": diff})

    def same_value(self, run) -> None:
        """Races of stores with stores only (no load or atomic of the address by another program): the
        launch again in reversed and shuffled program order. Where every order gives what the first
        run gave, the programs stored the same value there: the result does not depend on which
        wins (``order_free``: a warning, not an error). The program goes on with the first run's."""
        if self.pre is None or not self.tensors or any(r["other_kind"] != "store" for r in self.races):
            return
        kept = [t.clone() for t in self.tensors]
        same = True
        for order in ("reverse", SHUFFLE_SEED):
            self._rerun(run, order=order, race=False, poison_masked=False)
            if _differences(self.tensors, kept):
                same = False
                break
        for t, k in zip(self.tensors, kept):
            _restore(t, k)
        self.order_free = same

    def orders(self, run) -> None:
        """Reversed and shuffled program orders against the order the program goes on with."""
        kept = [t.clone() for t in self.tensors]
        for order in ("reverse", SHUFFLE_SEED):
            self._rerun(run, order=order, race=False, poison_masked=False)
            diff = _differences(self.tensors, kept)
            if diff:
                code = "P303" if self.float_atomics else "P302"
                self.found.append({"code": code, "kernel": self.kernel, "line": "", "differ": diff,
                                   "order": "reversed" if order == "reverse" else f"shuffled (seed {order})"})
                break
        for t, k in zip(self.tensors, kept):
            _restore(t, k)


def _restore(t, values) -> None:
    """``t`` holds ``values`` again, as the kernel's own writes change it: through ``.data``, outside
    autograd (a leaf that requires grad may not be written in place, and a tensor saved for backward
    must not look modified), as a launch's raw stores are."""
    t.data.copy_(values)


OOB_CODES = {"store": "P101", "load": "P102", "atomic": "P103"}


def _differences(after: list, before: list) -> dict:
    """{argument index: elements that differ}, NaN equal to NaN."""
    out = {}
    for i, (a, b) in enumerate(zip(after, before)):
        if a.is_floating_point() or a.is_complex():
            same = (a == b) | (a.isnan() & b.isnan())
        else:
            same = a == b
        n = int((~same).sum())
        if n:
            out[i] = n
    return out


def _tensors(args, kwargs) -> list:
    """The torch tensors among a launch's arguments (a ``triton.reinterpret`` wrapper's base)."""
    import torch

    out = []
    for a in list(args) + list(kwargs.values()):
        if not isinstance(a, torch.Tensor) and isinstance(getattr(a, "base", None), torch.Tensor):
            a = a.base
        if isinstance(a, torch.Tensor) and not any(a is t for t in out):
            out.append(a)
    return out


@functools.cache
def _skipped() -> tuple:
    """The folders whose frames are not the user's: the harness, Triton, torch, NumPy, pytest, the standard library."""
    import importlib.util

    dirs = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]  # harness/
    for name in ("triton", "torch", "numpy", "_pytest", "pluggy"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            dirs.append(os.path.dirname(spec.origin))
    dirs.append(os.path.dirname(os.__file__) + os.sep)  # the standard library (runpy, contextlib)
    return tuple(dirs)


def launch_site(root: str | None) -> dict:
    """Where the user's code launched the kernel: the innermost frame outside Triton, torch,
    pytest and the harness (``launched_at``), and the line of the test or script it came from
    (``called_from``) where that is another frame."""
    from harness.run.interp_instrument import short_path

    skip = _skipped()
    frames = []
    f = sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename
        if not name.startswith("<") and not os.path.abspath(name).startswith(skip):
            frames.append((os.path.abspath(name), f.f_lineno))
        f = f.f_back
    if not frames:
        return {"launched_at": "?", "called_from": ""}
    first = f"{short_path(frames[0][0])}:{frames[0][1]}"
    origin = next((f"{short_path(p)}:{n}" for p, n in frames if root and p == root), "")
    return {"launched_at": first, "called_from": origin if origin != first else ""}
