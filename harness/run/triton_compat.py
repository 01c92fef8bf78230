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
2. NumPy 2.4 and later (interpreter only). The interpreter turns a scalar kernel
   argument into a Python int with ``int(array_of_shape_1)``, which NumPy 2.4 made an
   error, so ``for start in range(0, n, BLOCK)`` over a runtime ``n`` dies with
   ``TypeError: only 0-dimensional arrays can be converted to Python scalars``. The
   patch makes ``__index__`` take the array's single element. Triton's
   ``_patch_lang_tensor`` took ``(tensor)`` before 3.6 and takes ``(tensor, scope)``
   since; the form is chosen by looking at the function, not at the version.
3. Counting autotune's benchmarking launches (any backend): every launch the
   autotuner's benchmark makes goes into ``TuningCounter.calls``.

Cases stay plain Triton code.
"""

from __future__ import annotations

import inspect
import statistics
import time
from contextlib import contextmanager
from typing import Callable, Iterator


class TuningCounter:
    """Kernel launches made by each autotune benchmark since the last ``clear()``."""

    def __init__(self):
        self.calls: list[int] = []

    def clear(self) -> None:
        self.calls.clear()


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


def index_patch(original: Callable) -> Callable:
    """``original`` (Triton's ``_patch_lang_tensor``) followed by a NumPy-2.4-proof ``__index__``."""
    def index(self):
        return int(self.handle.data.reshape(-1)[0])

    if len(inspect.signature(original).parameters) >= 2:  # (tensor, scope): Triton 3.6 and later
        def patch(tensor, scope):
            original(tensor, scope)
            scope.set_attr(tensor, "__index__", index)
    else:  # (tensor): Triton 3.4 and 3.5
        def patch(tensor):
            original(tensor)
            tensor.__index__ = index
    return patch


def _index_fix() -> Callable[[], None]:
    from triton.runtime import interpreter

    original = interpreter._patch_lang_tensor
    interpreter._patch_lang_tensor = index_patch(original)

    def undo():
        interpreter._patch_lang_tensor = original
    return undo


def _launch_counter(counter: TuningCounter) -> Callable[[], None]:
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


@contextmanager
def patched(interpreter: bool) -> Iterator[TuningCounter]:
    """Apply the patches this backend needs for the block; yield the tuning-launch counter."""
    counter = TuningCounter()
    undo = []
    try:
        if interpreter:
            undo.append(_cpu_benchmarker())
            undo.append(_index_fix())
        undo.append(_launch_counter(counter))
        yield counter
    finally:
        for u in reversed(undo):
            u()


def reset_autotune_caches(*modules) -> int:
    """Forget every tuned config in ``modules``, so the next call tunes again.

    Each trial then sees a true first call, as a fresh process would.
    """
    from triton.runtime.autotuner import Autotuner

    n = 0
    for m in modules:
        for obj in vars(m).values():
            while obj is not None:
                if isinstance(obj, Autotuner):
                    obj.cache.clear()
                    n += 1
                obj = getattr(obj, "fn", None) if not isinstance(obj, type) else None
    return n
