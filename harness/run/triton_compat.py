"""The one place the harness touches Triton's internals, each patch undone on leaving.

``patched(interpreter=...)`` applies, for one block:

1. ``@triton.autotune`` with no GPU (interpreter only). With more than one config the
   autotuner asks ``driver.active.get_benchmarker()`` for its timer, and with no GPU
   there is no active driver: ``RuntimeError: 0 active drivers``. ``do_bench_cpu``
   follows ``triton.testing.do_bench`` call for call (one call, five to estimate the
   time, then ``warmup / estimate`` warm-up calls and ``rep / estimate`` timed calls),
   timed with the host clock. So an autotuned kernel whose launches have side effects
   (``tl.atomic_add`` into an output, an in-place update) accumulates them during
   tuning exactly as on a GPU; only the number of repetitions is smaller.
2. NumPy 2.4 and later (interpreter only). Triton 3.4 to 3.6's interpreter turns a
   scalar kernel argument into a Python int with ``int(array_of_shape_1)``, which NumPy
   2.4 made an error, so ``for start in range(0, n, BLOCK)`` over a runtime ``n`` dies
   with ``TypeError: only 0-dimensional arrays can be converted to Python scalars``.
   After Triton's own ``_patch_lang_tensor`` has run, the patch tries the ``__index__``
   it installed on a one-element array, and only where that fails (or warns) puts in
   one that takes the array's single element: Triton 3.7 and later pass the probe and
   keep their own. ``_patch_lang_tensor`` took ``(tensor)`` before 3.6 and takes
   ``(tensor, scope)`` since; the form is chosen by looking at the function, not at
   the version.
3. Counting autotune's benchmarking launches (any backend) into ``TuningCounter.calls``.
   On a GPU, where Triton has the public hooks (``triton.knobs.autotuning.listener``,
   3.8 and later, and ``knobs.runtime.launch_enter_hook`` as a chain), no internal is
   touched: the launch hook counts each kernel's launches, and when the listener says
   a kernel was tuned (not a cache hit), the launches of that kernel since the last
   ``clear()`` are its tuning launches (one entry per tuning). Elsewhere (an older
   Triton, or the interpreter, which calls no launch hook and whose autotuner fails
   in 3.8 and 3.9 when a listener is set) ``Autotuner._bench`` is wrapped and every
   call of the benchmarked kernel counted (one entry per benchmarked config).
   ``TuningCounter.how`` says which ("listener" or "wrapper").
4. Everyday kernel code that compiled Triton accepts and the plain interpreter gets wrong
   (interpreter only; ``EVERYDAY_FIXES``, each found by looking at the interpreter, each
   undone on leaving): ``list-grid``, a grid given as a list (``kernel[[n]]``); ``bool-ops``,
   ``and``, ``or`` and ``not`` between tensors element by element, as the code generator
   does (the interpreter evaluated Python's ``and`` and dropped a mask); ``libdevice``,
   ``libdevice.exp`` and the rest computed with NumPy (the interpreter returned None or
   raised for them); ``compiled-helpers``, a ``@triton.jit`` helper decorated before
   TRITON_INTERPRET was set, run as the interpreter's device function; ``scalar-args``, a float
   or bool kernel argument made an fp32 or int1 scalar where the interpreter does not (3.7: a
   float has no ``.to()``, a bool's int1 fails); ``wrap-triton``, ``torch.library.wrap_triton`` handing an
   interpreted kernel back as it is (before torch 2.13 it raised). ``for start in
   range(0, n, BLOCK)`` over a runtime ``n`` with NumPy 2.4 is item 2. And numbers:
   ``bf16-arithmetic``, bfloat16 ``+``, ``-``, ``*``, comparisons, ``tl.clamp``, ``tl.fma`` and
   Python-float constants computed on the values, not on their 16-bit patterns (and ``tl.fma``
   rounded once in every float type); ``float-conversions``, float32 to bfloat16 and every
   conversion to and from fp8e4nv and fp8e5 rounded to nearest even, through torch (the
   interpreter truncated, dropped the carry into the exponent: fp32 127.9 became fp8 64).
   Both in harness/run/interp_numerics.py, each probing the interpreter first and patching
   only what it gets wrong.
5. The kernels launched (any backend): each ``@triton.jit`` function whose ``run`` is called
   (``kernel[grid](...)``, through autotune and heuristics too) is kept in ``LAUNCHED``, so that
   what inspects the user's kernels (the probe's facts, its lint cross-check) reads the ones
   really launched, wherever their modules live (``launched_kernels``, ``launched_files``), and
   whether a float64 tensor was among a launch's arguments (``launched_float64``: the error
   floor's formats).

``interpreter_fixes(*names)`` is the other kind: for the rest of one worker process, under
``TRITON_INTERPRET=1`` only, it makes the interpreter do what compiled Triton does where a
real kernel needs it (the real-bug benchmark's glue asks for them by name):

- ``bool-args``: a bool kernel argument becomes an int1 scalar (3.7 makes an int32 array
  typed int1 and rejects it);
- ``float-args``: a float kernel argument becomes an fp32 scalar (3.7 passes a Python float
  on, which has no ``.to()``);
- ``range-int32``: ``tl.range`` yields int32 scalars (3.7 yields Python ints);
- ``fp8-rounding``: the name the benchmark's glue knew ``float-conversions`` by (item 4), which
  ``patched`` now applies for every kernel.

Every patch goes through a ``harness.run.patching.Patcher``: ``patched``'s is undone on leaving
the block, ``interpreter_fixes``' is the process's ``for_good()`` one. Cases stay plain Triton code.
"""

from __future__ import annotations

import inspect
import os
import statistics
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from harness.run.interp_numerics import bf16_arithmetic, float_conversions
from harness.run.patching import Patcher, for_good


class TuningCounter:
    """Kernel launches made by autotune's benchmarking since the last ``clear()``.

    ``calls`` holds one count per benchmarked config ("wrapper") or per tuning
    ("listener"); their sum is what the tables report. ``pending`` holds, for the
    listener, each kernel's launches not yet attributed to a tuning.
    """

    def __init__(self):
        self.calls: list[int] = []
        self.pending: dict[str, int] = {}
        self.how = "wrapper"
        self.seconds = 0.0  # spent benchmarking configs (compiling them included) since ``patched`` began; never cleared
        # spent compiling kernels since ``patched`` began (where it was given ``on_compile``: the GPU); never cleared
        self.compiling = 0.0

    def clear(self) -> None:
        self.calls.clear()
        self.pending.clear()


def do_bench_cpu(fn, warmup: float = 25, rep: float = 100, quantiles=None, return_mode: str = "mean",
                 calls: int | None = None):
    """``triton.testing.do_bench``'s algorithm, timed with ``time.perf_counter``; with ``calls``
    (the probe: 2, ``patched(bench_calls=)``), one call and that many less one timed (the
    interpreter's timings choose nothing a GPU would; the launches' side effects still happen
    before the real one)."""
    if calls is not None:
        fn()
        times = []
        for _ in range(max(1, calls - 1)):
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1000)
        return _fastest(times, quantiles)
    fn()
    t0 = time.perf_counter()
    for _ in range(5):
        fn()
    estimate_ms = max((time.perf_counter() - t0) * 1000 / 5, 1e-6)
    for _ in range(max(1, int(warmup / estimate_ms))):
        fn()
    times = []
    for _ in range(max(1, int(rep / estimate_ms))):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    if quantiles is not None:
        qs = statistics.quantiles(times, n=100, method="inclusive") if len(times) > 1 else times * 99
        ret = [qs[max(0, min(98, int(q * 100) - 1))] if 0 < q < 1 else (min(times) if q <= 0 else max(times))
               for q in quantiles]
        return ret[0] if len(ret) == 1 else ret
    return {"mean": statistics.fmean, "median": statistics.median, "min": min, "max": max,
            "all": list}[return_mode](times)


def do_bench_gpu_calls(fn, warmup: float = 25, rep: float = 100, quantiles=None, return_mode: str = "mean",
                       calls: int = 2):
    """An autotune benchmark on the GPU in ``calls`` launches (one warm-up, the rest timed with CUDA
    events), not do_bench's 25 ms warm-up and 100 ms of timed runs: the probe wants each config
    launched before the real call, as autotune does, and its timings only to choose a config (a
    config chosen on fewer runs is one that autotune may choose as well)."""
    import torch

    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(max(1, calls - 1)):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return _fastest(times, quantiles)


def _fastest(times: list, quantiles):
    """A few-call benchmark's answer, as do_bench gives it: the fastest time, once per quantile asked."""
    return [min(times)] * len(quantiles) if quantiles is not None and len(quantiles) > 1 else min(times)


def _few_calls(bench: Callable, calls: int | None) -> Callable:
    import functools

    return functools.partial(bench, calls=calls) if calls is not None else bench


def _timed(bench: Callable, counter: TuningCounter) -> Callable:
    """``bench``, adding the seconds each benchmark takes (a config's compilation is in its first
    launch) to ``counter.seconds``; ``__wrapped__`` is ``bench``."""
    import functools

    @functools.wraps(bench)
    def timed(*args, **kw):
        t0 = time.perf_counter()
        try:
            return bench(*args, **kw)
        finally:
            counter.seconds += time.perf_counter() - t0
    return timed


# Harness GPU workers (``isolate.worker_env``) set this: their autotune benchmarks take turns on the GPU.
BENCH_TURNS_ENV = "CASEBOOK_GPU_BENCH_TURNS"
# How long a benchmark waits for its turn before it runs anyway (a worker stuck in a benchmark, such
# as a kernel that hangs, must not stop the others; the run's own timeout ends that worker).
TURN_WAIT_S = 30.0


def _bench_lock_path() -> str:
    """One lock file a GPU (by its UUID where torch gives one), beside the harness's other caches."""
    import os

    import torch

    dev = torch.cuda.current_device()
    uid = getattr(torch.cuda.get_device_properties(dev), "uuid", None)
    name = str(uid) if uid is not None else f"{os.environ.get('CUDA_VISIBLE_DEVICES', '')}-{dev}"
    folder = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "triton-casebook")
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, "gpu-bench-" + "".join(c if c.isalnum() or c == "-" else "_" for c in name) + ".lock")


def in_turns(bench: Callable, lock_path: Callable[[], str], wait_s: float = TURN_WAIT_S,
             clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> Callable:
    """``bench`` holding an exclusive lock on the file ``lock_path()`` names while it runs: workers that
    share a GPU benchmark their autotune configs one at a time. Each config's benchmark is still
    Triton's own (the same launches); only when it runs changes. Several processes benchmarking at
    once on one GPU time-slice it, and each config's do_bench then took several times its 0.11 s
    alone (docs/measurements/autotune-cost-h200.txt). After ``wait_s`` without the lock the benchmark
    runs anyway. The config's first call (its compilation) comes before the turn."""
    import fcntl
    import functools

    @functools.wraps(bench)
    def turn(fn, *args, **kw):
        with open(lock_path(), "a") as f:
            held = [False]

            def wait_turn() -> None:
                deadline = clock() + wait_s
                while True:
                    try:
                        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        held[0] = True
                        return
                    except OSError:
                        if clock() >= deadline:
                            return
                        sleep(0.005)

            calls = [0]

            def then_turn():
                # do_bench's first call compiles the config (CPU work, seconds on a cold cache): it runs
                # before the turn, so that workers compile side by side and take turns only on the GPU
                fn()
                calls[0] += 1
                if calls[0] == 1:
                    wait_turn()

            try:
                return bench(then_turn, *args, **kw)
            finally:
                if held[0]:
                    fcntl.flock(f, fcntl.LOCK_UN)
    return turn


def _gpu_benchmarker() -> Callable:
    def bench(*args, **kw):
        from triton.runtime import driver
        return driver.active.get_benchmarker()(*args, **kw)
    return bench


def autotune_benchmarker(bench: Callable, patcher: Patcher) -> None:
    """Every ``@triton.autotune`` that was given no ``do_bench`` of its own times its configs with
    ``bench`` (``patched`` uses ``do_bench_cpu`` under the interpreter; ``harness sanitize`` one run
    per config), until ``patcher`` is undone."""
    from triton.runtime import autotuner

    class _Benchmarker:  # a non-data descriptor, like the cached_property it replaces
        def __get__(self, obj, objtype=None):
            if obj is None:
                return self
            return obj._do_bench if obj._do_bench is not None else bench

    patcher.setattr(autotuner.Autotuner, "do_bench", _Benchmarker())


def _one_element_index(self):
    return int(self.handle.data.reshape(-1)[0])


def _index_works(index) -> bool:
    """Whether an ``__index__`` takes a one-element array (not only a 0-d one) without a warning."""
    import types
    import warnings

    import numpy as np

    probe = types.SimpleNamespace(handle=types.SimpleNamespace(data=np.array([7], dtype=np.int32)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return index(probe) == 7
    except Exception:
        return False


def index_patch(original: Callable) -> Callable:
    """``original`` (Triton's ``_patch_lang_tensor``) followed, where its ``__index__`` fails
    on a one-element array, by one that takes the single element."""
    if len(inspect.signature(original).parameters) >= 2:  # (tensor, scope): Triton 3.6 and later
        def patch(tensor, scope):
            original(tensor, scope)
            if not _index_works(tensor.__index__):
                scope.set_attr(tensor, "__index__", _one_element_index)
    else:  # (tensor): Triton 3.4 and 3.5
        def patch(tensor):
            original(tensor)
            if not _index_works(tensor.__index__):
                tensor.__index__ = _one_element_index
    return patch


def _index_fix(patcher: Patcher) -> None:
    from triton.runtime import interpreter

    patcher.setattr(interpreter, "_patch_lang_tensor", index_patch(interpreter._patch_lang_tensor))


def _bench_wrapper(counter: TuningCounter, patcher: Patcher) -> None:
    """Wrap ``Autotuner._bench``: count each call of the kernel its benchmarker makes."""
    from triton.runtime import autotuner

    original = autotuner.Autotuner._bench

    def _bench(self, *args, config, **meta):
        real = self.do_bench
        count = [0]

        def counting(kernel_call, quantiles):
            def call():
                count[0] += 1
                kernel_call()
            try:
                return real(call, quantiles=quantiles)
            finally:
                counter.calls.append(count[0])

        with Patcher() as call:
            call.setitem(self.__dict__, "do_bench", counting)  # shadows the (cached) property for this call
            return original(self, *args, config=config, **meta)

    patcher.setattr(autotuner.Autotuner, "_bench", _bench)


def public_tuning_hooks():
    """``(knobs.autotuning, knobs.runtime.launch_enter_hook)`` where Triton has both public
    hooks (an autotuning listener and a chain of launch hooks: 3.8 and later), else None."""
    try:
        from triton import knobs
    except ImportError:
        return None
    autotuning, runtime = getattr(knobs, "autotuning", None), getattr(knobs, "runtime", None)
    chain = getattr(runtime, "launch_enter_hook", None)
    if not hasattr(autotuning, "listener") or not (hasattr(chain, "add") and hasattr(chain, "remove")):
        return None
    return autotuning, chain


def _launch_name(metadata) -> str | None:
    """The kernel's name from a launch hook's metadata (a LazyDict: read its data without
    running the kernel's own ``launch_metadata`` function)."""
    data = metadata if isinstance(metadata, dict) else getattr(metadata, "data", None)
    return data.get("name") if isinstance(data, dict) else None


def _listener_counter(counter: TuningCounter, autotuning, chain, patcher: Patcher) -> None:
    """Count tuning launches with Triton's public hooks, until ``patcher`` is undone."""
    previous = autotuning.listener

    def on_launch(metadata):
        name = _launch_name(metadata)
        counter.pending[name] = counter.pending.get(name, 0) + 1

    def listener(*, fn, cache_hit, **info):
        launches = counter.pending.pop(getattr(fn, "__name__", None), 0)
        if not cache_hit:
            counter.calls.append(launches)
        if previous is not None:
            previous(fn=fn, cache_hit=cache_hit, **info)

    chain.add(on_launch)
    patcher.callback(lambda: chain.remove(on_launch))
    patcher.setattr(autotuning, "listener", listener)
    counter.how = "listener"


def _launch_counter(counter: TuningCounter, interpreter: bool, patcher: Patcher) -> None:
    """The public hooks where they work (compiled launches, Triton 3.8+), else the wrapper."""
    hooks = None if interpreter else public_tuning_hooks()
    if hooks is not None:
        return _listener_counter(counter, *hooks, patcher)
    counter.how = "wrapper"
    return _bench_wrapper(counter, patcher)


@contextmanager
def patched(interpreter: bool, on_compile: Callable[[str], None] | None = None,
            bench_calls: int | None = None) -> Iterator[TuningCounter]:
    """Apply the patches this backend needs for the block; yield the tuning-launch counter.
    ``on_compile("compiling")`` is called before each kernel compilation, ``on_compile("compiled")`` after.
    ``bench_calls``: each autotune config benchmarked in that many calls (``do_bench_cpu`` under the
    interpreter, ``do_bench_gpu_calls`` on the GPU), not do_bench's eight or more under the
    interpreter and 25 + 100 ms of runs on the GPU."""
    counter = TuningCounter()
    with Patcher() as patcher:
        if interpreter:
            autotune_benchmarker(_timed(_few_calls(do_bench_cpu, bench_calls), counter), patcher)
            _index_fix(patcher)
            for fix in EVERYDAY_FIXES.values():
                fix(patcher)
        elif bench_calls is not None:
            autotune_benchmarker(_timed(_few_calls(do_bench_gpu_calls, bench_calls), counter), patcher)
        elif os.environ.get(BENCH_TURNS_ENV) == "1":
            autotune_benchmarker(in_turns(_gpu_benchmarker(), _bench_lock_path), patcher)
        _launch_counter(counter, interpreter, patcher)
        _record_launches(patcher)
        if on_compile is not None:
            _compile_hook(_compile_clock(on_compile, counter), patcher)
        yield counter


def _compile_clock(notify: Callable[[str], None], counter: TuningCounter) -> Callable[[str], None]:
    """``notify``, with the seconds between each "compiling" and its "compiled" added to ``counter.compiling``."""
    started: list[float] = []

    def hook(what: str) -> None:
        if what == "compiling":
            started.append(time.perf_counter())
        elif what == "compiled" and started:
            counter.compiling += time.perf_counter() - started.pop()
        notify(what)
    return hook


LAUNCHED: dict[int, object] = {}  # id -> each @triton.jit function launched in this process while patched
TUNERS: dict[int, object] = {}  # id -> each Autotuner run in this process while patched (``reset_autotune_caches``)
WIDE: set = set()  # ids of those launched with a float64 tensor argument (``launched_float64``)
INTS: list = []  # the sets ``launch_ints`` is filling: every integer argument of each launch goes in each
TENSORS: list = []  # the dicts ``launch_tensors`` is filling: each launch's tensor arguments by kernel and name


def _record_launches(patcher: Patcher) -> None:
    """Keep each JITFunction (or InterpretedFunction) whose ``run`` is called in ``LAUNCHED``."""
    from triton.runtime.jit import JITFunction

    classes = [JITFunction]
    try:
        from triton.runtime.interpreter import InterpretedFunction
        classes.append(InterpretedFunction)
    except ImportError:  # an older Triton
        pass
    for cls in classes:
        real = vars(cls).get("run")
        if real is None:
            # Triton 3.4 and 3.5: an InterpretedFunction has no ``run``; ``kernel[grid]`` returns the
            # GridExecutor that launches, so the launch is noted on its way there
            getitem = vars(cls).get("__getitem__")
            if getitem is not None:
                patcher.setattr(cls, "__getitem__", _noting_getitem(getitem))
            continue

        def run(self, *args, _real=real, **kwargs):
            _note_launch(self, args, kwargs)
            return _real(self, *args, **kwargs)

        patcher.setattr(cls, "run", run)
    _record_tuners(patcher)


def _record_tuners(patcher: Patcher) -> None:
    """Keep each Autotuner whose ``run`` is called in ``TUNERS``, wherever its module lives (a package the probe
    file imports a launcher from): ``reset_autotune_caches`` clears them too."""
    from triton.runtime.autotuner import Autotuner

    real = vars(Autotuner).get("run")
    if real is None:
        return

    def run(self, *args, _real=real, **kwargs):
        TUNERS.setdefault(id(self), self)
        return _real(self, *args, **kwargs)

    patcher.setattr(Autotuner, "run", run)


def _noting_getitem(real):
    def getitem(self, grid):
        launch = real(self, grid)

        def noted(*args, **kwargs):
            _note_launch(self, args, kwargs)
            return launch(*args, **kwargs)
        return noted
    return getitem


def _note_launch(fn, args: tuple, kwargs: dict) -> None:
    """What a launch of ``fn`` tells: the function itself (LAUNCHED), a float64 tensor among its
    arguments (WIDE), and its integer arguments for ``launch_ints``: the kernel's own, by position
    or by name (not the launch options a keyword may carry: ``num_warps=4``)."""
    LAUNCHED.setdefault(id(fn), fn)
    names = getattr(fn, "arg_names", None)
    own = [*args, *(v for k, v in kwargs.items() if names is None or k in names)]
    if any(str(getattr(a, "dtype", "")) == "torch.float64" for a in own):
        WIDE.add(id(fn))  # a float64 pointer: the kernel computes in float64 there
    for into in INTS:
        into.update(a for a in own if type(a) is int)
    if TENSORS and names is not None:
        given = {**dict(zip(names, args)), **{k: v for k, v in kwargs.items() if k in names}}
        for into in TENSORS:
            for k, v in given.items():
                if hasattr(v, "data_ptr") and hasattr(v, "numel"):
                    key = (getattr(getattr(fn, "fn", fn), "__name__", "?"), k)
                    into[key] = max(into.get(key, (0, 0)), (int(v.numel()), int(v.element_size())))


@contextmanager
def launch_tensors() -> Iterator[dict]:
    """The tensor arguments of every kernel launch in the block: {(kernel name, argument name): (numel,
    itemsize)}, the largest seen for each (the buffers a launcher makes for itself included, which the
    inputs and the result do not show)."""
    got: dict = {}
    TENSORS.append(got)
    try:
        yield got
    finally:
        TENSORS.remove(got)


@contextmanager
def launch_ints() -> Iterator[set]:
    """The integer arguments of every kernel launch in the block (sizes, strides a launcher passes,
    constexprs), as one set, filled as the launches come (under ``patched``; elsewhere it stays empty)."""
    got: set = set()
    INTS.append(got)
    try:
        yield got
    finally:
        INTS.remove(got)


def launched_kernels() -> list:
    """The ``@triton.jit`` functions launched so far in this process (under ``patched``), in order."""
    return list(LAUNCHED.values())


def launched_float64(kernel) -> bool:
    """Whether a launched kernel was given a float64 tensor (a pointer it reads or writes in float64)."""
    return id(kernel) in WIDE


def kernel_file(fn) -> str | None:
    """The file that defines a launched kernel (its Python function's ``co_filename``), or None."""
    code = getattr(getattr(fn, "fn", None), "__code__", None)
    name = getattr(code, "co_filename", None)
    return name if name and not name.startswith("<") else None


def launched_files() -> list[str]:
    """The files defining the kernels launched so far, each once, in launch order."""
    return list(dict.fromkeys(f for k in launched_kernels() if (f := kernel_file(k))))


def wrapped_objects(*modules) -> Iterator[object]:
    """Every object of ``modules`` and each one it wraps (``.fn``: autotune, heuristics, jit)."""
    for m in modules:
        for obj in vars(m).values():
            while obj is not None and not isinstance(obj, type):
                yield obj
                obj = getattr(obj, "fn", None)


def reset_autotune_caches(*modules, launched: bool = False) -> int:
    """Forget every tuned config in ``modules`` (and, with ``launched``, of every autotuned kernel run so far in
    this process, ``TUNERS``: a launcher's kernels live in the module it imports them from, not in the probe
    file's), so the next call tunes again.

    Each trial then sees a true first call, as a fresh process would.
    """
    from triton.runtime.autotuner import Autotuner

    seen = {}
    for obj in [*wrapped_objects(*modules), *(TUNERS.values() if launched else ())]:
        if isinstance(obj, Autotuner):
            seen[id(obj)] = obj
    for obj in seen.values():
        obj.cache.clear()
    return len(seen)


def compiled_kernels(*modules) -> list[dict]:
    """Every kernel compiled from the ``@triton.jit`` functions of ``modules`` (behind any
    autotune or heuristics wrapper): name, shared memory in bytes and warps, as Triton's
    compiled metadata gives them. Empty under the interpreter (nothing is compiled)."""
    seen, out = set(), []
    for obj in wrapped_objects(*modules):
        caches = getattr(obj, "device_caches", None)
        if isinstance(caches, dict) and id(obj) not in seen:
            seen.add(id(obj))
            out += [_kernel_info(k) for entry in caches.values() for k in _kernel_cache(entry)]
    return [k for k in out if k is not None]


def _kernel_cache(entry) -> list:
    """The compiled kernels of one device's cache entry: a tuple whose first item is a dict in 3.4-3.9."""
    first = entry[0] if isinstance(entry, tuple) and entry else entry
    return list(first.values()) if isinstance(first, dict) else []


def _kernel_info(kernel) -> dict | None:
    md = getattr(kernel, "metadata", None)
    shared = getattr(md, "shared", None)
    if shared is None:
        return None
    return {"name": getattr(md, "name", getattr(kernel, "name", "?")), "shared": int(shared),
            "num_warps": getattr(md, "num_warps", None)}


def instrumentation_modes() -> tuple[str, ...]:
    """The ``TRITON_INSTRUMENTATION_MODE`` sanitizers this Triton's NVIDIA backend knows,
    found in the backend's own source (the knob takes any string and ignores unknown modes):
    every quoted ``...san`` word it compares the mode with. The list of sanitizers stays
    with their detectors (harness/probe/detectors/consan.py, gsan.py, fpsan.py, iisan.py)."""
    import inspect
    import re

    try:
        from triton import knobs
        from triton.backends.nvidia import compiler

        if not hasattr(knobs.compilation, "instrumentation_mode"):
            return ()
        src = inspect.getsource(compiler)
    except Exception:  # no knob, no NVIDIA backend, no source: no sanitizer
        return ()
    return tuple(sorted(set(re.findall(r"""["']([a-z]+san)["']""", src))))


def install_scratch_allocator() -> bool:
    """Give Triton a global-scratch allocator (instrumented kernels need one) if it takes one."""
    import torch
    import triton

    if not hasattr(triton, "set_allocator"):
        return False
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    return True


def _compile_hook(notify: Callable[[str], None], patcher: Patcher) -> None:
    """Call ``notify("compiling")`` before and ``notify("compiled")`` after each kernel
    compilation (``knobs.runtime.jit_cache_hook`` and ``jit_post_compile_hook``, each chained
    to any hook already set), so that a watchdog can tell a long compile from a hang."""
    try:
        from triton import knobs

        runtime = knobs.runtime
        before, after = runtime.jit_cache_hook, runtime.jit_post_compile_hook
    except (ImportError, AttributeError):  # no such hooks: nothing to report
        return

    def chain(previous, what: str):
        def hook(*args, **kwargs):  # Triton calls it with keyword arguments
            notify(what)
            # the cache hook's answer matters: true skips the compilation, so only a previous hook gives one
            return previous(*args, **kwargs) if previous else None
        return hook

    patcher.setattr(runtime, "jit_cache_hook", chain(before, "compiling"))
    patcher.setattr(runtime, "jit_post_compile_hook", chain(after, "compiled"))


def _scalar_cvt(kind: type, np_dtype: str, tl_name: str) -> Callable[[Patcher], None]:
    """A kernel argument of Python type ``kind`` becomes a scalar of ``tl_name``, as compiled."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    def install(patcher: Patcher):
        plain, ty = interpreter._implicit_cvt, getattr(tl, tl_name)

        def cvt(arg):
            if isinstance(arg, kind):
                return tl.tensor(interpreter.TensorHandle(np.array([arg], dtype=np_dtype), ty), ty)
            return plain(arg)

        patcher.setattr(interpreter, "_implicit_cvt", cvt)
    return install


def _range_int32(patcher: Patcher) -> None:
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    plain = interpreter._patch_lang_core

    def int32_range(arg1, arg2=None, step=None, **_kwargs):
        start, end = (0, arg1) if arg2 is None else (arg1, arg2)
        for i in range(start, end, 1 if step is None else step):
            yield tl.tensor(interpreter.TensorHandle(np.array([i], dtype=np.int32), tl.int32), tl.int32)

    def patch(lang, *args):
        plain(lang, *args)
        if args and args[0] is not None:
            args[0].set_attr(lang, "range", int32_range)

    patcher.setattr(interpreter, "_patch_lang_core", patch)


# ---- 4. what everyday kernels do that compiled Triton accepts and the plain interpreter gets wrong

def _list_grid(patcher: Patcher) -> None:
    """``kernel[[n]](...)``: a grid given as a list (or a grid function returning one), which
    compiled Triton takes as it takes a tuple, becomes a tuple (the interpreter adds ``(1,) * k``
    to it and fails on a list)."""
    from triton.runtime import interpreter

    init = interpreter.GridExecutor.__init__

    def __init__(self, fn, arg_names, grid, *args, **kwargs):
        init(self, fn, arg_names, _tuple_grid(grid), *args, **kwargs)

    patcher.setattr(interpreter.GridExecutor, "__init__", __init__)


def _wrap_triton(patcher: Patcher) -> None:
    """``torch.library.wrap_triton(kernel)`` (what a ``torch.library.triton_op`` launcher calls) before torch 2.13
    refuses the interpreter's ``@triton.jit``, an ``InterpretedFunction`` and no ``JITFunction`` ("wrap_triton only
    works on functions annotated with triton.jit or triton.autotune"), so such a launcher runs compiled and raises
    under TRITON_INTERPRET=1 (fairchem's Wigner kernels on torch 2.11). torch 2.13 hands an interpreted kernel back
    as it is, eager-launchable; the same here, for ``wrap_triton`` and its older name ``capture_triton``, where the
    launcher's module binds it while the patch holds (the probe loads the user's file inside ``patched``)."""
    try:
        import torch.library as library
        from torch._library import triton as torch_triton
        from triton.runtime.autotuner import Autotuner
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # a torch or Triton without them: nothing to mend
        return

    def interpreted(kernel) -> bool:
        return isinstance(kernel, InterpretedFunction) or (isinstance(kernel, Autotuner)
                                                           and isinstance(getattr(kernel, "fn", None), InterpretedFunction))

    for name in ("wrap_triton", "capture_triton"):
        original = getattr(torch_triton, name, None)
        if original is None:
            continue

        def wrap(kernel, /, _original=original):
            return kernel if interpreted(kernel) else _original(kernel)

        patcher.setattr(torch_triton, name, wrap)
        if getattr(library, name, None) is original:
            patcher.setattr(library, name, wrap)


def _tuple_grid(grid):
    if isinstance(grid, list):
        return tuple(grid)
    if callable(grid):
        def as_tuple(meta, _grid=grid):
            g = _grid(meta)
            return tuple(g) if isinstance(g, list) else g
        return as_tuple
    return grid


def bool_op(is_and: bool, *values):
    """``a and b`` / ``a or b`` in a kernel as compiled Triton evaluates it (its code generator's
    ``visit_BoolOp``): each operand in turn (``values`` are thunks); one that is not a tensor
    (a Python value, a constexpr) decides the result when it can (False for ``and``, True for
    ``or``) and is dropped otherwise; the tensors are combined with ``logical_and`` /
    ``logical_or``, element by element. Python's own ``and`` asks a tensor of several elements
    for its truth, which the interpreter answers True: ``mask_a and mask_b`` was ``mask_b``."""
    import triton.language as tl

    kept, value = [], None
    for thunk in values:
        value = thunk()
        if not isinstance(value, tl.tensor):
            if bool(value) is not is_and:
                return value
            continue
        kept.append(value)
    if not kept:
        return value
    while len(kept) >= 2:
        rhs, lhs = kept.pop(), kept.pop()
        kept.append(lhs.logical_and(rhs) if is_and else lhs.logical_or(rhs))
    return kept[0]


def not_op(value):
    """``not x`` in a kernel as compiled: a tensor's ``__not__`` (element by element), else Python's ``not``."""
    import triton.language as tl

    if isinstance(value, tl.tensor) and hasattr(value, "__not__"):
        return value.__not__()
    return not value


_HELPERS = "_casebook_interpreter_ops"  # the name the rewritten kernels call bool_op and not_op by


def _bool_ops(patcher: Patcher) -> None:
    """Kernels rewritten by the interpreter (``FunctionRewriter``, which already rewrites
    assignments) get ``and``, ``or`` and ``not`` as compiled Triton has them (``bool_op``,
    ``not_op``). The interpreter's cache of rewritten kernels is emptied on the way in and out,
    so that no kernel keeps the other form."""
    import ast
    import types

    from triton.runtime import interpreter

    rewriter, cache = getattr(interpreter, "FunctionRewriter", None), getattr(interpreter, "InterpretedFunction", None)
    if rewriter is None or not hasattr(rewriter, "ast_transformer") or not isinstance(
            getattr(cache, "rewritten_fn", None), dict):
        return  # another interpreter: leave it alone

    def helper(attr):
        return ast.Attribute(value=ast.Name(id=_HELPERS, ctx=ast.Load()), attr=attr, ctx=ast.Load())

    def thunk(node):
        args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                             defaults=[])
        return ast.Lambda(args=args, body=node)

    class BoolOps(ast.NodeTransformer):
        def visit_BoolOp(self, node):
            self.generic_visit(node)
            call = ast.Call(func=helper("bool_op"), args=[ast.Constant(isinstance(node.op, ast.And)),
                                                          *[thunk(v) for v in node.values]], keywords=[])
            return ast.copy_location(call, node)

        def visit_UnaryOp(self, node):
            self.generic_visit(node)
            if not isinstance(node.op, ast.Not):
                return node
            return ast.copy_location(ast.Call(func=helper("not_op"), args=[node.operand], keywords=[]), node)

    original = rewriter.ast_transformer

    class Both:
        def visit(self, tree):
            return original.visit(BoolOps().visit(tree))

    patcher.setattr(interpreter, _HELPERS, types.SimpleNamespace(bool_op=bool_op, not_op=not_op))
    patcher.callback(cache.rewritten_fn.clear)  # on the way out, after the transformer is put back
    patcher.setattr(rewriter, "ast_transformer", Both())
    cache.rewritten_fn.clear()


def _libdevice(patcher: Patcher) -> None:
    """``libdevice.exp(x)`` and the rest, from ``triton.language.extra.libdevice`` (stubs whose
    body is ``...``: the interpreter returns None for them), ``triton.language.extra.cuda.libdevice``
    and ``.hip.libdevice`` (which ask for a ``_semantic`` the interpreter does not give), or
    imported by name from any of them: each runs the CUDA libdevice function of its name under
    the interpreter's semantic (its own type dispatch, broadcasting and result type), and
    ``create_extern_elementwise``, which the interpreter does not implement, computes the
    libdevice symbol with NumPy in float64 (``libdevice_numpy``), rounded to the result type.
    Where this interpreter implements ``create_extern_elementwise`` itself, nothing changes."""
    from triton.runtime import interpreter

    B = interpreter.InterpreterBuilder
    semantic = getattr(interpreter, "interpreter_semantic", None)
    if semantic is None or not _extern_unsupported(B):
        return
    try:
        from triton.language.extra.cuda import libdevice as cuda
    except ImportError:
        return
    import triton.language as tl

    patcher.setattr(B, "create_extern_elementwise", _extern_elementwise)
    swap = {}  # id(the function a kernel may hold) -> (it, what runs under the interpreter)
    builtins = {k: v for k, v in vars(cuda).items() if not k.startswith("_") and tl.core.is_builtin(v)}
    for mod in _libdevice_modules():
        for name, fn in list(vars(mod).items()):
            real = builtins.get(name)
            if real is None or not callable(fn):
                continue
            run = _under_interpreter(real, semantic)
            swap[id(fn)] = (fn, run)
            patcher.setattr(mod, name, run)
    _swap_imported_names(swap, patcher)


def _libdevice_modules() -> list:
    import importlib

    out = []
    for name in ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice",
                 "triton.language.extra.hip.libdevice"):
        try:
            out.append(importlib.import_module(name))
        except Exception:  # noqa: BLE001  (a backend this Triton lacks)
            continue
    return out


def _under_interpreter(real, semantic):
    def run(*args, **kwargs):
        kwargs.pop("_semantic", None)
        kwargs.pop("_builder", None)
        return real(*args, **kwargs, _semantic=semantic)
    run.__name__ = getattr(real, "__name__", "libdevice")
    run.casebook_libdevice = True
    return run


def _swap_imported_names(swap: dict, patcher: Patcher) -> None:
    """``from triton.language.extra.libdevice import exp``: the kernel's module holds the function
    itself, which the module patch does not reach; ``_patch_lang``, run by the interpreter for
    every kernel and device function it calls, now swaps such names in the kernel's globals too
    (put back on the way out)."""
    from triton.runtime import interpreter

    plain = interpreter._patch_lang
    swapped = []  # (globals, name, original)

    def patch_lang(fn, *args, **kwargs):
        scope = plain(fn, *args, **kwargs)
        g = getattr(fn, "__globals__", None)
        if isinstance(g, dict):
            for name, value in list(g.items()):
                hit = swap.get(id(value))
                if hit is not None and hit[0] is value:
                    g[name] = hit[1]
                    swapped.append((g, name, value))
        return scope

    def unswap():  # a name the kernel's module has set again since is left as it is
        for g, name, value in reversed(swapped):
            if getattr(g.get(name), "casebook_libdevice", False):
                g[name] = value

    patcher.callback(unswap)  # after _patch_lang is put back
    patcher.setattr(interpreter, "_patch_lang", patch_lang)


def _extern_unsupported(builder_cls) -> bool:
    """Whether this interpreter's ``create_extern_elementwise`` raises NotImplementedError (3.4 to 3.9)."""
    try:
        builder_cls.create_extern_elementwise(None, "", "", "__nv_expf", [], None, True)
    except NotImplementedError:
        return True
    except Exception:  # noqa: BLE001  it tried to compute something: implemented
        return False
    return False


def _extern_elementwise(self, libName, libPath, symbol, argList, retType, isPure):
    import warnings

    import numpy as np
    from triton.runtime import interpreter

    ret = getattr(retType, "scalar", retType)
    np_ret = interpreter._get_np_dtype(ret)
    fn = libdevice_numpy(symbol, np_ret)
    if fn is None:
        raise NotImplementedError(f"libdevice {symbol} has no NumPy equivalent under the interpreter "
                                  f"(harness/run/triton_compat.py libdevice_numpy)")
    args = [np.asarray(a.data) for a in argList]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = np.asarray(fn(*args))
        if out.dtype != np_ret:
            out = out.astype(np_ret)
    if args and out.shape != args[0].shape:
        out = np.broadcast_to(out, args[0].shape).copy()
    return interpreter.TensorHandle(np.ascontiguousarray(out), ret)


def _f64(fn):
    """``fn`` on the float arguments in float64 (integers as they are): the result is then rounded
    once, to the result type, which is as close as libdevice gets (its fp32 functions are within
    a few ulp, its ``_rn`` arithmetic correctly rounded, which float64 then one rounding gives)."""
    import numpy as np

    def run(*args):
        return fn(*[a.astype(np.float64) if np.issubdtype(a.dtype, np.floating) else a for a in args])
    return run


def _torch(name):
    def run(x):
        import torch

        f = torch.special if hasattr(torch.special, name) else torch
        return getattr(f, name)(torch.from_numpy(x.copy())).numpy()
    return run


def _gamma(x):
    import math

    import numpy as np

    def one(v):
        try:
            return math.gamma(v)
        except (ValueError, OverflowError):
            return float("nan") if v <= 0 and float(v).is_integer() or v != v else float("inf")
    return np.vectorize(one, otypes=[np.float64])(x)


def _bits(x):
    """The unsigned view of an integer array and its width in bits."""
    import numpy as np

    u = x.view(np.dtype(f"uint{x.dtype.itemsize * 8}"))
    return u, x.dtype.itemsize * 8


def _clz(x):
    import numpy as np

    u, width = _bits(x)
    n, found = np.zeros(u.shape, dtype=np.int32), np.zeros(u.shape, dtype=bool)
    for i in range(width - 1, -1, -1):
        found |= ((u >> np.array(i, dtype=u.dtype)) & np.array(1, dtype=u.dtype)).astype(bool)
        n += ~found
    return n


def _ffs(x):
    import numpy as np

    u, width = _bits(x)
    out = np.zeros(u.shape, dtype=np.int32)
    for i in range(width - 1, -1, -1):
        out = np.where((u >> np.array(i, dtype=u.dtype)) & np.array(1, dtype=u.dtype), i + 1, out)
    return out


def _popc(x):
    import numpy as np

    u, width = _bits(x)
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(u).astype(np.int32)
    return sum(((u >> np.array(i, dtype=u.dtype)) & np.array(1, dtype=u.dtype)).astype(np.int32)
               for i in range(width))


def _libdevice_table() -> dict:
    import numpy as np

    one = np.float64(1.0)
    f = {
        "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x), "expm1": np.expm1,
        "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
        "sqrt": np.sqrt, "rsqrt": lambda x: one / np.sqrt(x), "cbrt": np.cbrt, "rcbrt": lambda x: one / np.cbrt(x),
        "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
        "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh,
        "atanh": np.arctanh, "atan2": np.arctan2, "sinpi": lambda x: np.sin(np.pi * x),
        "cospi": lambda x: np.cos(np.pi * x),
        "erf": _torch("erf"), "erfc": _torch("erfc"), "erfinv": _torch("erfinv"),
        "erfcinv": lambda x: _torch("erfinv")(1.0 - x), "erfcx": _torch("erfcx"),
        "normcdf": _torch("ndtr"), "normcdfinv": _torch("ndtri"), "lgamma": _torch("lgamma"), "tgamma": _gamma,
        "j0": _torch("bessel_j0"), "j1": _torch("bessel_j1"), "y0": _torch("bessel_y0"), "y1": _torch("bessel_y1"),
        "cyl_bessel_i0": _torch("i0"), "cyl_bessel_i1": _torch("i1"),
        "pow": np.power, "powi": lambda x, n: np.power(x, n.astype(np.float64)), "fmod": np.fmod,
        "remainder": lambda x, y: x - np.rint(x / y) * y, "hypot": np.hypot, "rhypot": lambda x, y: one / np.hypot(x, y),
        "norm3d": lambda a, b, c: np.sqrt(a * a + b * b + c * c),
        "rnorm3d": lambda a, b, c: one / np.sqrt(a * a + b * b + c * c),
        "norm4d": lambda a, b, c, d: np.sqrt(a * a + b * b + c * c + d * d),
        "rnorm4d": lambda a, b, c, d: one / np.sqrt(a * a + b * b + c * c + d * d),
        "copysign": np.copysign, "fdim": lambda x, y: np.maximum(x - y, 0.0), "fma": lambda x, y, z: x * y + z,
        "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "rint": np.rint, "nearbyint": np.rint,
        "round": lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x), "llrint": np.rint,
        "llround": lambda x: np.copysign(np.floor(np.abs(x) + 0.5), x),
        "fabs": np.abs, "abs": np.abs, "llabs": np.abs, "saturate": lambda x: np.clip(x, 0.0, 1.0),
        "isnan": np.isnan, "isinf": np.isinf, "finite": np.isfinite, "isfinite": np.isfinite,
        "signbit": np.signbit, "ldexp": lambda x, n: np.ldexp(x, n.astype(np.int32)),
        "scalbn": lambda x, n: np.ldexp(x, n.astype(np.int32)), "fdivide": np.divide,
        "clz": _clz, "ffs": _ffs, "popc": _popc,
    }
    return {k: v if k in ("clz", "ffs", "popc") else _f64(v) for k, v in f.items()}


_ROUNDING = {"rn": "rint", "rz": "trunc", "rd": "floor", "ru": "ceil"}
_ARITH = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide"}
_TABLE: dict = {}


def libdevice_numpy(symbol: str, np_ret):
    """A NumPy function of the arrays of CUDA libdevice's ``symbol`` (``__nv_expf``,
    ``__nv_fast_expf``, ``__nv_fdiv_rn``, ``__nv_float2int_rz``, ``__nv_isnanf``, ...), or None
    for one it has no equivalent of (arithmetic rounded other than to nearest, among others)."""
    import re

    import numpy as np

    if not _TABLE:
        _TABLE.update(_libdevice_table())
    name = symbol.removeprefix("__nv_").removeprefix("fast_")
    if m := re.fullmatch(r"(float|double|int|uint|ll|ull)2(float|double|int|uint|ll|ull)_(rn|rz|rd|ru)", name):
        if m[2] in ("float", "double"):
            return (lambda x: x.astype(np_ret)) if m[3] == "rn" else None
        return _f64(getattr(np, _ROUNDING[m[3]]))
    if name in ("float_as_int", "float_as_uint", "int_as_float", "uint_as_float", "double_as_longlong",
                "longlong_as_double"):
        return lambda x: x.view(np_ret)
    if m := re.fullmatch(r"([fd])(add|sub|mul|div)_rn", name):
        return _f64(getattr(np, _ARITH[m[2]]))
    if m := re.fullmatch(r"[fd](rcp|sqrt|rsqrt)_rn", name):
        return _TABLE["rsqrt"] if m[1] == "rsqrt" else _f64(np.sqrt) if m[1] == "sqrt" else _f64(
            lambda x: np.float64(1.0) / x)
    if re.fullmatch(r"fmaf?_rn", name):
        return _TABLE["fma"]
    if name in ("nextafter", "nextafterf"):
        return lambda x, y: np.nextafter(x.astype(np_ret), y.astype(np_ret))
    for base in (name, name[:-1] if name[-1:] in ("f", "d") else None, name[:-2] if name.endswith("ll") else None):
        if base in _TABLE:
            return _TABLE[base]
    return None


def _compiled_helpers(patcher: Patcher) -> None:
    """A ``@triton.jit`` helper decorated before TRITON_INTERPRET was set (Triton's own ``tl.sum``
    when something imported triton first, or a user's module imported early) is a compiled
    JITFunction, which refuses to be called; inside an interpreted kernel it runs as the
    interpreter's device function instead, as a helper decorated under TRITON_INTERPRET would."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    made: dict = {}

    def call(self, *args, **kwargs):
        if id(self) not in made:
            made[id(self)] = (self, InterpretedFunction(self.fn))  # the JITFunction kept: its id stays its own
        return made[id(self)][1](*args, **kwargs)

    patcher.setattr(JITFunction, "__call__", call)


def _scalar_args(patcher: Patcher) -> None:
    """A float or bool kernel argument becomes an fp32 or int1 scalar, as compiled Triton makes it,
    where this interpreter does not (3.7 passes a Python float on, which has no ``.to()``, and fails
    to make a bool's int1): each conversion is tried on a sample first and replaced only where it
    fails, so an interpreter that does it right keeps its own."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    plain = getattr(interpreter, "_implicit_cvt", None)
    if plain is None:
        return
    for kind, sample, np_dtype, tl_name in ((float, 1.5, "float32", "float32"), (bool, True, "bool", "int1")):
        try:
            r = plain(sample)
            data = getattr(getattr(r, "handle", None), "data", None)
            right = isinstance(r, tl.tensor) and isinstance(data, np.ndarray) and data.dtype == np.dtype(np_dtype)
        except Exception:  # noqa: BLE001  the interpreter's own conversion fails on it
            right = False
        if not right:
            _scalar_cvt(kind, np_dtype, tl_name)(patcher)


EVERYDAY_FIXES = {"list-grid": _list_grid, "bool-ops": _bool_ops, "libdevice": _libdevice,
                  "compiled-helpers": _compiled_helpers, "scalar-args": _scalar_args, "wrap-triton": _wrap_triton,
                  "bf16-arithmetic": bf16_arithmetic, "float-conversions": float_conversions}


INTERPRETER_FIXES = {"bool-args": lambda patcher: _scalar_cvt(bool, "bool", "int1")(patcher),
                     "float-args": lambda patcher: _scalar_cvt(float, "float32", "float32")(patcher),
                     "range-int32": _range_int32, "fp8-rounding": float_conversions}
_APPLIED: set = set()


def interpreter_fixes(*names: str) -> None:
    """Apply the named fixes (module docstring) once each, for the rest of this process; nothing
    outside the interpreter."""
    import os

    if os.environ.get("TRITON_INTERPRET") != "1":
        return
    for name in names:
        if name not in _APPLIED:
            INTERPRETER_FIXES[name](for_good())
            _APPLIED.add(name)
