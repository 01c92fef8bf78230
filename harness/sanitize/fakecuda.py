"""CUDA on a machine without a GPU, for a test suite written for ``device="cuda"``.

``install()`` returns the function that undoes everything it did; while installed:

- **tensors**: a torch function mode sends every ``device="cuda"`` (a string, ``torch.device``,
  an index) to the CPU, in factories (``torch.randn(n, device="cuda")``), ``.to("cuda")``,
  ``.cuda()``, ``new_*``, ``pin_memory`` (a no-op). Each tensor answers ``is_cuda`` True and,
  inside that mode, ``.device`` is ``cuda:0`` (``assert x.is_cuda``, ``x.device.type ==
  "cuda"`` guards, ``torch.empty(..., device=x.device)`` all work; a device read off a
  tensor comes back through the mode to the CPU). Values, dtypes, shapes and strides are
  torch's own on the CPU.
- **torch.cuda**: ``is_available`` (True), ``device_count`` (1), ``current_device``,
  ``set_device``, ``device(...)`` and ``_DeviceGuard`` (no-op contexts), ``synchronize``,
  ``get_device_name``, ``get_device_capability`` (9, 0), ``get_device_properties`` (an
  H100-like record: name, major, minor, multi_processor_count, warp_size; total_memory the
  host's), ``is_bf16_supported`` (False: what the interpreter can do, so suites leave out the
  bf16 tests whose results it gets wrong),
  ``Stream``, ``current_stream``, ``default_stream``, ``stream(...)``, ``Event`` (record,
  synchronize, query, wait, ``elapsed_time`` from the host clock), the memory statistics
  (``memory_allocated`` and the rest answer 0, ``mem_get_info`` the host's free and total memory,
  ``reset_peak_memory_stats`` and ``empty_cache`` do nothing), ``manual_seed`` and
  ``manual_seed_all`` (seed the CPU generator), ``get_rng_state``/``set_rng_state``.
- **autocast**: ``torch.autocast("cuda")``, ``torch.amp.autocast("cuda")`` and
  ``torch.cuda.amp.autocast()`` are autocast on the CPU with CUDA's default dtype (float16).
- **torch.compile**: the function (or module) is run as written, eagerly: Inductor would make
  kernels for the GPU that is not there; the compiled region's own Triton launches are still
  the user's, and checked. ``torch.compile(fn)``, ``@torch.compile(fullgraph=True, ...)`` alike.
- **Triton**: where no GPU driver is active, a stand-in driver answers the queries launch
  code makes (``driver.active.get_current_device()``, ``...utils.get_device_properties(d)
  ["multiprocessor_count"]``, the target); ``triton.testing.do_bench`` runs the function once
  and returns its host time.
- **the default device**: ``torch.set_default_device("cuda")`` sets the CPU (the tensors say CUDA).

Not supported: Inductor's own kernels (``torch.compile`` runs eagerly), CUDA graphs,
``torch.Generator(device="cuda")``, several GPUs (one device, index 0), real asynchrony (every stream is the CPU's
program order), memory statistics that mean anything, code in other threads (a torch function
mode is per thread).
"""

from __future__ import annotations

import contextlib
import time
from typing import Callable

from harness.run.patching import Patcher

CAPABILITY = (9, 0)
NAME = "casebook fake CUDA (CPU, no GPU)"
TOTAL_MEMORY = 80 * 2**30  # where the host's memory cannot be read


def host_memory() -> tuple[int, int]:
    """(free, total) bytes of the host's memory: what the kernels really have under the interpreter,
    so that a suite that sizes its tensors by ``mem_get_info`` (or skips when they do not fit) sizes
    them for this machine, not for a GPU's 80 GiB."""
    import os

    try:
        page = os.sysconf("SC_PAGE_SIZE")
        return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page
    except (ValueError, OSError, AttributeError):
        return TOTAL_MEMORY, TOTAL_MEMORY


class _Props:
    name = NAME
    major, minor = CAPABILITY
    multi_processor_count = 132
    total_memory = property(lambda self: host_memory()[1])
    warp_size = 32
    max_threads_per_multi_processor = 2048
    L2_cache_size = 50 * 2**20
    is_integrated = False
    uuid = "fake-cuda-0"


class FakeStream:
    """A CUDA stream that is the CPU's program order."""

    cuda_stream = 0
    device = None
    device_index = 0
    priority = 0

    def __init__(self, *args, **kwargs):
        pass

    def wait_stream(self, stream=None):
        pass

    def wait_event(self, event=None):
        pass

    def record_event(self, event=None):
        event = event or FakeEvent()
        event.record(self)
        return event

    def synchronize(self):
        pass

    def query(self):
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __eq__(self, other):
        return isinstance(other, FakeStream)

    def __hash__(self):
        return 0


class FakeEvent:
    """A CUDA event: the host clock at ``record()``."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False, **kwargs):
        self.at = None

    def record(self, stream=None):
        self.at = time.perf_counter()

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def elapsed_time(self, end) -> float:
        if self.at is None or end.at is None:
            raise RuntimeError("elapsed_time: both events must be recorded first")
        return (end.at - self.at) * 1e3


def _seed(seed):
    import torch

    torch.random.default_generator.manual_seed(int(seed))


def _cuda_answers() -> dict:
    import torch

    default = FakeStream()
    return {
        "is_available": lambda: True, "is_initialized": lambda: True, "init": lambda: None,
        "device_count": lambda: 1, "current_device": lambda: 0, "set_device": lambda device=None: None,
        "device": _NoDevice, "_DeviceGuard": _NoDevice, "device_of": _NoDevice,
        "synchronize": lambda device=None: None, "empty_cache": lambda: None, "ipc_collect": lambda: None,
        "get_device_name": lambda device=None: NAME, "get_device_capability": lambda device=None: CAPABILITY,
        "get_device_properties": lambda device=None: _Props(), "get_arch_list": lambda: ["sm_90"],
        "Stream": FakeStream, "Event": FakeEvent, "current_stream": lambda device=None: default,
        "default_stream": lambda device=None: default, "stream": lambda stream=None: contextlib.nullcontext(stream),
        "set_stream": lambda stream=None: None,
        "memory_allocated": lambda device=None: 0, "max_memory_allocated": lambda device=None: 0,
        "memory_reserved": lambda device=None: 0, "max_memory_reserved": lambda device=None: 0,
        "memory_cached": lambda device=None: 0, "max_memory_cached": lambda device=None: 0,
        "memory_stats": lambda device=None: {}, "memory_summary": lambda *a, **k: "",
        "mem_get_info": lambda device=None: host_memory(),
        "is_bf16_supported": lambda including_emulation=True: False,  # the interpreter computes bf16 wrongly
        "reset_peak_memory_stats": lambda device=None: None, "reset_max_memory_allocated": lambda device=None: None,
        "reset_accumulated_memory_stats": lambda device=None: None,
        "manual_seed": _seed, "manual_seed_all": _seed, "seed": lambda: None, "seed_all": lambda: None,
        "initial_seed": torch.initial_seed,
        "get_rng_state": lambda device="cuda": torch.get_rng_state(),
        "set_rng_state": lambda state, device="cuda": torch.set_rng_state(state),
    }


class _NoDevice(contextlib.nullcontext):
    def __init__(self, *args, **kwargs):
        super().__init__()


def _is_cuda(device) -> bool:
    if device is None or isinstance(device, bool):
        return False
    if isinstance(device, int):
        return True  # a bare index is a CUDA device
    return str(device).startswith("cuda")


def _mode():
    """The torch function mode that puts every CUDA tensor on the CPU."""
    import torch
    from torch.overrides import TorchFunctionMode

    cpu = torch.device("cpu")

    class CudaIsCpu(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {})
            if _is_cuda(kwargs.get("device")):
                kwargs["device"] = cpu
            if kwargs.get("pin_memory"):
                kwargs["pin_memory"] = False
            name = getattr(func, "__name__", "")
            if name in ("cuda", "pin_memory") and args and isinstance(args[0], torch.Tensor):
                return args[0]
            if name == "to" and args and isinstance(args[0], torch.Tensor):
                args = tuple(cpu if i and _is_cuda(a) and not isinstance(a, (torch.Tensor, torch.dtype)) else a
                             for i, a in enumerate(args))
            return func(*args, **kwargs)

    return CudaIsCpu()


def _pretend_tensors(mode, patcher: Patcher) -> None:
    """``is_cuda`` True; ``.device`` cuda:0 where the mode is in force, until ``patcher`` is undone."""
    import torch
    from torch.overrides import _get_current_function_mode_stack

    pretend = torch.device("cuda", 0)
    real = torch._C.TensorBase.device.__get__

    def device(self):
        return pretend if mode in _get_current_function_mode_stack() else real(self)

    patcher.setattr(torch.Tensor, "is_cuda", property(lambda self: True))
    patcher.setattr(torch.Tensor, "device", property(device))


class FakeDriver:
    """What launch code asks of ``triton.runtime.driver.active`` when there is no GPU."""

    def __init__(self):
        import types

        from triton.backends.compiler import GPUTarget

        self.target = GPUTarget("cuda", CAPABILITY[0] * 10 + CAPABILITY[1], 32)
        self.utils = types.SimpleNamespace(get_device_properties=self.get_device_properties)

    @staticmethod
    def is_active():
        return True

    def get_current_target(self):
        return self.target

    def get_current_device(self):
        return 0

    def set_current_device(self, device):
        pass

    def get_current_stream(self, device=None):
        return 0

    def get_device_properties(self, device=None):
        return {"max_shared_mem": 232448, "multiprocessor_count": _Props.multi_processor_count,
                "sm_clock_rate": 1980000, "mem_clock_rate": 2619000, "mem_bus_width": 5120,
                "max_num_regs": 65536, "warpSize": 32}

    def get_active_torch_device(self):
        import torch

        return torch.device("cuda", 0)

    def get_device_interface(self):
        import torch

        return torch.cuda

    def get_benchmarker(self):
        return do_bench_once

    def get_empty_cache_for_benchmark(self):
        import torch

        return torch.empty(0)

    def clear_cache(self, cache):
        pass


def do_bench_once(fn, *args, quantiles=None, return_mode="mean", **kwargs):
    """``triton.testing.do_bench`` without a GPU: the function once, its host time in ms."""
    start = time.perf_counter()
    fn()
    ms = (time.perf_counter() - start) * 1e3
    return [ms] * len(quantiles) if quantiles else ms


def _triton(patcher: Patcher) -> None:
    """The stand-in driver where none is active, and ``do_bench`` once, until ``patcher`` is undone."""
    import triton.testing as testing
    from triton.runtime import driver

    patcher.setattr(testing, "do_bench", do_bench_once)
    try:
        driver.active  # noqa: B018: a real driver (a GPU) is kept
    except Exception:  # noqa: BLE001: no GPU ("0 active drivers", or no libcuda)
        fake = FakeDriver()
        patcher.setattr(driver, "_default", fake)
        patcher.setattr(driver, "_active", fake)


def _autocast(patcher: Patcher) -> None:
    """``torch.autocast("cuda", ...)`` (and ``torch.amp.autocast``, ``torch.cuda.amp.autocast``) is
    autocast on the CPU, where the tensors are, with CUDA's default dtype (float16): the ops a suite
    runs under it give the dtypes they give on a GPU. Until ``patcher`` is undone."""
    import torch
    from torch.amp import autocast_mode

    real = autocast_mode.autocast

    class autocast(real):  # noqa: N801: the name suites see
        def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=None):
            if _is_cuda(device_type):
                device_type, dtype = "cpu", dtype or torch.float16
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class cuda_autocast(autocast):  # noqa: N801: torch.cuda.amp.autocast(enabled, dtype, cache_enabled)
        def __init__(self, enabled=True, dtype=torch.float16, cache_enabled=True):
            super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    patcher.setattr(torch, "autocast", autocast)
    patcher.setattr(torch.amp, "autocast", autocast)
    patcher.setattr(autocast_mode, "autocast", autocast)
    if hasattr(torch.cuda, "amp") and hasattr(torch.cuda.amp, "autocast"):
        patcher.setattr(torch.cuda.amp, "autocast", cuda_autocast)


def _compile(patcher: Patcher) -> None:
    """``torch.compile`` returns what it was given (or, called with options only, a decorator that
    does): the function runs eagerly on the CPU tensors, as it would before compiling. Inductor
    would generate kernels for a GPU that is not there (it asks the fake device what it cannot
    answer). Until ``patcher`` is undone; a function compiled before the fake keeps its compilation."""
    import torch

    def compile(model=None, **options):  # noqa: A001: the name suites call
        if model is None:
            return lambda fn: fn
        return model

    patcher.setattr(torch, "compile", compile)


def _default_device(patcher: Patcher) -> None:
    """``torch.set_default_device("cuda")`` (or a CUDA ``torch.device``, an index) sets the CPU: the
    factories then make CPU tensors that say they are on CUDA, like those asked for by name (torch's
    own would initialise CUDA and fail). Until ``patcher`` is undone, which also puts back the default
    device the suite had left at that point."""
    import torch

    real = torch.set_default_device

    def set_default_device(device):
        return real("cpu" if _is_cuda(device) else device)

    patcher.setattr(torch, "set_default_device", set_default_device)
    before = torch.get_default_device()
    patcher.callback(lambda: real(before))


def install() -> Callable[[], None]:
    """Fake CUDA in this thread (the module's docstring); returns the undo."""
    import torch

    patcher = Patcher()
    try:
        _triton(patcher)  # before torch.cuda answers True: a real driver is looked for first
        for name, answer in _cuda_answers().items():
            patcher.setattr(torch.cuda, name, answer)
        _autocast(patcher)
        _compile(patcher)
        _default_device(patcher)
        mode = _mode()
        _pretend_tensors(mode, patcher)
        mode.__enter__()
        patcher.callback(lambda: mode.__exit__(None, None, None))
    except BaseException:
        patcher.undo()
        raise
    return patcher.undo
