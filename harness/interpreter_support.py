"""What the harness adds so that Triton's interpreter runs the cases faithfully.

1. ``@triton.autotune`` on a machine with no GPU.

With more than one config the autotuner asks ``driver.active.get_benchmarker()`` for
its timer, and with no GPU there is no active driver: ``RuntimeError: 0 active
drivers``. The harness installs the benchmarker below instead. It follows
``triton.testing.do_bench`` call for call (one call, five calls to estimate the
time, then ``warmup / estimate`` warm-up calls and ``rep / estimate`` timed calls),
timing with the host clock. So an autotuned kernel whose launches have side effects
(``tl.atomic_add`` into an output, an in-place update) accumulates them during
tuning exactly as it does on a GPU; only the number of repetitions is smaller,
because the interpreter is slower.

2. NumPy 2.4 and later. The interpreter turns a scalar kernel argument into a Python
int with ``int(array_of_shape_1)``, which NumPy 2.4 made an error. Any loop such as
``for start in range(0, n, BLOCK)`` over a runtime ``n`` then dies with ``TypeError:
only 0-dimensional arrays can be converted to Python scalars``. ``install()`` wraps
that conversion so that it takes the array's single element.

This module is the only place the harness touches Triton's internals. Cases stay
plain Triton code.
"""

from __future__ import annotations

import statistics
import time

CALLS: list[int] = []  # kernel launches made by each autotune benchmark (count_tuning_launches)


def do_bench_cpu(fn, warmup: float = 25, rep: float = 100, quantiles=None, return_mode: str = "mean"):
    """``triton.testing.do_bench``'s algorithm, timed with ``time.perf_counter``."""
    fn()
    t0 = time.perf_counter()
    for _ in range(5):
        fn()
    estimate_ms = max((time.perf_counter() - t0) * 1000 / 5, 1e-6)
    n_warmup = max(1, int(warmup / estimate_ms))
    n_repeat = max(1, int(rep / estimate_ms))
    for _ in range(n_warmup):
        fn()
    times = []
    for _ in range(n_repeat):
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


def install() -> None:
    """Use ``do_bench_cpu`` in every autotuner without its own, and fix scalar ``__index__``."""
    from triton.runtime import autotuner, interpreter

    class _CpuBenchmarker:  # a non-data descriptor, like the cached_property it replaces
        def __get__(self, obj, objtype=None):
            if obj is None:
                return self
            return obj._do_bench if obj._do_bench is not None else do_bench_cpu

    autotuner.Autotuner.do_bench = _CpuBenchmarker()

    original = interpreter._patch_lang_tensor
    if getattr(original, "_casebook", False):
        return

    def _patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    _patch_lang_tensor._casebook = True
    interpreter._patch_lang_tensor = _patch_lang_tensor


def count_tuning_launches() -> None:
    """On any backend: count the kernel launches each autotuner benchmark makes (into CALLS)."""
    from triton.runtime import autotuner

    if getattr(autotuner.Autotuner, "_casebook_counting", False):
        return
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
                CALLS.append(count[0])

        self.__dict__["do_bench"] = counting  # shadows the (cached) property for this call
        try:
            return original(self, *args, config=config, **meta)
        finally:
            self.__dict__["do_bench"] = real

    autotuner.Autotuner._bench = _bench
    autotuner.Autotuner._casebook_counting = True


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
