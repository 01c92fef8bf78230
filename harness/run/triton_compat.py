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

``interpreter_fixes(*names)`` is the other kind: for the rest of one worker process, under
``TRITON_INTERPRET=1`` only, it makes the interpreter do what compiled Triton does where a
real kernel needs it (the real-bug benchmark's glue asks for them by name):

- ``bool-args``: a bool kernel argument becomes an int1 scalar (3.7 makes an int32 array
  typed int1 and rejects it);
- ``float-args``: a float kernel argument becomes an fp32 scalar (3.7 passes a Python float
  on, which has no ``.to()``);
- ``range-int32``: ``tl.range`` yields int32 scalars (3.7 yields Python ints);
- ``fp8-rounding``: fp32/fp16 to fp8 conversions round to nearest even, through torch (3.7
  drops the carry into the exponent: 127 becomes 64).

Cases stay plain Triton code.
"""

from __future__ import annotations

import inspect
import statistics
import time
from contextlib import contextmanager
from typing import Callable, Iterator


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

    def clear(self) -> None:
        self.calls.clear()
        self.pending.clear()


def do_bench_cpu(fn, warmup: float = 25, rep: float = 100, quantiles=None, return_mode: str = "mean"):
    """``triton.testing.do_bench``'s algorithm, timed with ``time.perf_counter``."""
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


def _set_class_attr(cls, name: str, value) -> Callable[[], None]:
    """Set ``cls.name`` and return the function that puts the old one back."""
    missing = object()
    old = cls.__dict__.get(name, missing)
    setattr(cls, name, value)

    def undo():
        if old is missing:
            delattr(cls, name)
        else:
            setattr(cls, name, old)
    return undo


def _cpu_benchmarker() -> Callable[[], None]:
    from triton.runtime import autotuner

    class _CpuBenchmarker:  # a non-data descriptor, like the cached_property it replaces
        def __get__(self, obj, objtype=None):
            if obj is None:
                return self
            return obj._do_bench if obj._do_bench is not None else do_bench_cpu

    return _set_class_attr(autotuner.Autotuner, "do_bench", _CpuBenchmarker())


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


def _index_fix() -> Callable[[], None]:
    from triton.runtime import interpreter

    original = interpreter._patch_lang_tensor
    interpreter._patch_lang_tensor = index_patch(original)

    def undo():
        interpreter._patch_lang_tensor = original
    return undo


def _bench_wrapper(counter: TuningCounter) -> Callable[[], None]:
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

        self.__dict__["do_bench"] = counting  # shadows the (cached) property for this call
        try:
            return original(self, *args, config=config, **meta)
        finally:
            self.__dict__["do_bench"] = real

    return _set_class_attr(autotuner.Autotuner, "_bench", _bench)


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


def _listener_counter(counter: TuningCounter, autotuning, chain) -> Callable[[], None]:
    """Count tuning launches with Triton's public hooks; return the function that removes them."""
    had_own = "listener" in vars(autotuning)
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
    autotuning.listener = listener
    counter.how = "listener"

    def undo():
        chain.remove(on_launch)
        if had_own:
            autotuning.listener = previous
        else:
            vars(autotuning).pop("listener", None)
    return undo


def _launch_counter(counter: TuningCounter, interpreter: bool) -> Callable[[], None]:
    """The public hooks where they work (compiled launches, Triton 3.8+), else the wrapper."""
    hooks = None if interpreter else public_tuning_hooks()
    if hooks is not None:
        return _listener_counter(counter, *hooks)
    counter.how = "wrapper"
    return _bench_wrapper(counter)


@contextmanager
def patched(interpreter: bool, on_compile: Callable[[str], None] | None = None) -> Iterator[TuningCounter]:
    """Apply the patches this backend needs for the block; yield the tuning-launch counter.
    ``on_compile("compiling")`` is called before each kernel compilation, ``on_compile("compiled")`` after."""
    counter = TuningCounter()
    undo = []
    try:
        if interpreter:
            undo.append(_cpu_benchmarker())
            undo.append(_index_fix())
        undo.append(_launch_counter(counter, interpreter))
        if on_compile is not None:
            undo.append(_compile_hook(on_compile))
        yield counter
    finally:
        for u in reversed(undo):
            u()


def _wrapped(*modules) -> Iterator[object]:
    """Every object of ``modules`` and each one it wraps (``.fn``: autotune, heuristics, jit)."""
    for m in modules:
        for obj in vars(m).values():
            while obj is not None and not isinstance(obj, type):
                yield obj
                obj = getattr(obj, "fn", None)


def reset_autotune_caches(*modules) -> int:
    """Forget every tuned config in ``modules``, so the next call tunes again.

    Each trial then sees a true first call, as a fresh process would.
    """
    from triton.runtime.autotuner import Autotuner

    n = 0
    for obj in _wrapped(*modules):
        if isinstance(obj, Autotuner):
            obj.cache.clear()
            n += 1
    return n


def compiled_kernels(*modules) -> list[dict]:
    """Every kernel compiled from the ``@triton.jit`` functions of ``modules`` (behind any
    autotune or heuristics wrapper): name, shared memory in bytes and warps, as Triton's
    compiled metadata gives them. Empty under the interpreter (nothing is compiled)."""
    seen, out = set(), []
    for obj in _wrapped(*modules):
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
    with their detectors (harness/detectors/triton_sanitizers.py)."""
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


def _compile_hook(notify: Callable[[str], None]) -> Callable[[], None]:
    """Call ``notify("compiling")`` before and ``notify("compiled")`` after each kernel
    compilation (``knobs.runtime.jit_cache_hook`` and ``jit_post_compile_hook``, each chained
    to any hook already set), so that a watchdog can tell a long compile from a hang."""
    try:
        from triton import knobs

        runtime = knobs.runtime
        before, after = runtime.jit_cache_hook, runtime.jit_post_compile_hook
    except (ImportError, AttributeError):  # no such hooks: nothing to report
        return lambda: None

    def chain(previous, what: str):
        def hook(*args, **kwargs):  # Triton calls it with keyword arguments
            notify(what)
            # the cache hook's answer matters: true skips the compilation, so only a previous hook gives one
            return previous(*args, **kwargs) if previous else None
        return hook

    runtime.jit_cache_hook = chain(before, "compiling")
    runtime.jit_post_compile_hook = chain(after, "compiled")

    def undo():
        runtime.jit_cache_hook, runtime.jit_post_compile_hook = before, after
    return undo


def _scalar_cvt(kind: type, np_dtype: str, tl_name: str) -> Callable[[], None]:
    """A kernel argument of Python type ``kind`` becomes a scalar of ``tl_name``, as compiled."""
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    def install():
        plain, ty = interpreter._implicit_cvt, getattr(tl, tl_name)

        def cvt(arg):
            if isinstance(arg, kind):
                return tl.tensor(interpreter.TensorHandle(np.array([arg], dtype=np_dtype), ty), ty)
            return plain(arg)

        interpreter._implicit_cvt = cvt
    return install


def _range_int32() -> None:
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

    interpreter._patch_lang_core = patch


def _fp8_rounding() -> None:
    import numpy as np
    import torch
    from triton.runtime import interpreter

    plain = interpreter._convert_float
    dst_types = {"fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2}

    def convert(input, input_dtype, output_dtype, rounding_mode):
        dst = dst_types.get(getattr(output_dtype, "name", ""))
        if dst is None or getattr(input_dtype, "name", "") not in ("fp32", "fp16"):
            return plain(input, input_dtype, output_dtype, rounding_mode)
        src = np.ascontiguousarray(input).astype(np.float32)
        return torch.from_numpy(src).to(dst).view(torch.uint8).numpy()

    interpreter._convert_float = convert


INTERPRETER_FIXES = {"bool-args": lambda: _scalar_cvt(bool, "bool", "int1")(),
                     "float-args": lambda: _scalar_cvt(float, "float32", "float32")(),
                     "range-int32": _range_int32, "fp8-rounding": _fp8_rounding}
_APPLIED: set = set()


def interpreter_fixes(*names: str) -> None:
    """Apply the named fixes (module docstring) once each, for the rest of this process; nothing
    outside the interpreter."""
    import os

    if os.environ.get("TRITON_INTERPRET") != "1":
        return
    for name in names:
        if name not in _APPLIED:
            INTERPRETER_FIXES[name]()
            _APPLIED.add(name)
