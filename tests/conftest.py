"""Shared fixtures: whether a GPU is here, and ``make_case``, a synthetic case folder to check."""

import copy
import datetime
import functools
import json
import signal
import time

import pytest

# A suite started in the background (`nohup python -m pytest ... &`) inherits SIGINT ignored, and so would every
# process a test starts: the tests of what Ctrl-C does (tests/test_interrupts.py, the interrupted sanitize runs)
# then see no signal at all. They run as from a terminal whatever started the suite (three of them failed so at
# 75051e9, docs/measurements/boards-session24.md).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@functools.cache
def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


# ---------------------------------------------------------------- GPU work starts together

_POOL: list = []  # the one thread pool of GPU work started ahead, once a GPU test is selected
_STARTED: dict = {}  # key -> Future
_T0 = time.monotonic()  # about when pytest started (conftest is imported before collection)
_TIMES: dict = {}  # key -> [began, ended] (time.monotonic) of each piece of work started ahead


def _timed(key, fn, times: dict, clock=time.monotonic):
    """``fn``, noting in ``times[key]`` when it began and ended (the suite's summary shows them)."""
    def run(*args, **kwargs):
        times[key] = [clock(), None]
        try:
            return fn(*args, **kwargs)
        finally:
            times[key][1] = clock()
    return run


def _start(key, fn, *args, **kwargs) -> None:
    """Start ``fn(*args, **kwargs)`` in a background thread under ``key`` (once)."""
    from concurrent.futures import ThreadPoolExecutor

    if key not in _STARTED:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(max_workers=16, thread_name_prefix="gpu-ahead"))  # every piece at once
        _STARTED[key] = _POOL[0].submit(_timed(key, fn, _TIMES), *args, **kwargs)


def ahead_lines(times: dict, t0: float) -> list[str]:
    """One line per piece of work started ahead: when it began and ended, in seconds from ``t0``,
    earliest first (what the GPU suite's wall time is made of: its longest piece)."""
    def at(t):
        return "not yet" if t is None else f"{t - t0:.1f} s"

    def name(key):
        return "/".join(map(str, key)) if isinstance(key, tuple) else str(key)

    rows = sorted(times.items(), key=lambda kv: kv[1][0])
    return [f"{name(key)}: began at {at(began)}, ended at {at(ended)}"
            + (f" ({ended - began:.1f} s)" if ended is not None else "") for key, (began, ended) in rows]


def pytest_terminal_summary(terminalreporter):
    if _TIMES:
        terminalreporter.section("GPU work started ahead (seconds from pytest's start)")
        for line in ahead_lines(_TIMES, _T0):
            terminalreporter.write_line(line)


def _take(key, fn, *args, **kwargs):
    """What ``fn(*args, **kwargs)`` returns: from the run started ahead under ``key``, else run now."""
    ahead = _STARTED.pop(key, None)
    return ahead.result() if ahead is not None else fn(*args, **kwargs)


_CONFIG: list = []  # this run's pytest config (the early start reads its selection)
_EARLY: set = set()  # the modules whose GPU work started as soon as they were collected


def pytest_configure(config):
    _CONFIG[:] = [config]
    if plainly_gpu(config.option, config.args) and _collects_the_cases(config) and _nvidia_driver():
        _start(("cases", "gpu"), _every_gpu_case)  # the suite's longest piece, before collection (issue 40)


def _nvidia_driver() -> bool:
    """An NVIDIA driver is loaded (no ``import torch``: that takes seconds). Where it is and CUDA still is not
    usable, the batch's workers say so and its tests skip, as without it."""
    import os
    return os.path.isdir("/proc/driver/nvidia/gpus") and bool(os.listdir("/proc/driver/nvidia/gpus"))


def _collects_the_cases(config) -> bool:
    """The run collects tests/test_cases.py (no paths given: the testpaths; or a path at or above it), and neither
    ``--ignore`` nor ``--ignore-glob`` leaves it out (a batch started for nothing: the session's end waits for it)."""
    import fnmatch
    from pathlib import Path
    cases = (Path(__file__).parent / "test_cases.py").resolve()
    here = Path(config.invocation_params.dir)
    args = [Path(str(a).split("::")[0]) for a in config.args] or [Path(__file__).parent]
    ignored = [(here / str(p)).resolve() for p in getattr(config.option, "ignore", None) or ()]
    if any(p == cases or p in cases.parents for p in ignored) or any(
            fnmatch.fnmatch(str(cases), str(here / g)) or fnmatch.fnmatch(str(cases), g)
            for g in getattr(config.option, "ignore_glob", None) or ()):
        return False
    return any(cases == (here / a).resolve() or (here / a).resolve() in cases.parents for a in args)


def _every_gpu_case() -> dict:
    """Every case's GPU run, as tests/test_cases.py's batch makes it for a plain ``-m gpu`` (each case whose
    GPU verdict is not a declared skip): started from ``pytest_configure``, before the ~5 s of collection
    ahead of that module."""
    from harness.core import discovery
    from harness.run.scheduler import run_many
    specs, _ = discovery.load_all()
    return run_many([(s, "gpu") for s in specs if s.expect["gpu"][0] != "skip"], jobs=2)


def plainly_gpu(option, args) -> bool:
    """Whether the run selects every ``gpu``-marked test of the files it collects, and nothing else
    decides (``-m gpu`` alone: no ``-k``, ``--deselect``, node id, ``--lf`` or ``--sw``; not ``--co``):
    then a module's selected GPU tests are known as soon as the module is collected."""
    return ((getattr(option, "markexpr", "") or "").strip() == "gpu" and not getattr(option, "keyword", "")
            and not getattr(option, "deselect", None) and not getattr(option, "lf", False)
            and not getattr(option, "stepwise", False) and not getattr(option, "collectonly", False)
            and all("::" not in str(a) for a in args))


def _gpu_items(items) -> list:
    return [i for i in items if i.get_closest_marker("gpu") is not None and i.get_closest_marker("skip") is None]


def pytest_collectreport(report):
    """Under a plain ``-m gpu``, a module's GPU work starts as soon as the module is collected, beside the
    collection of the modules after it (the whole suite's collection took 7.5 s on an H200, issue 40)."""
    if not _CONFIG or report.failed or not plainly_gpu(_CONFIG[0].option, _CONFIG[0].args):
        return
    items = list(report.result or ())
    module = getattr(items[0], "module", None) if items else None
    if module is None or not hasattr(module, "gpu_ahead") or not all(isinstance(i, pytest.Item) for i in items) \
            or "::" in report.nodeid:  # (a class's report: its own tests only, not its module's others)
        return  # (a module with classes: its tests are known at the end of collection)
    chosen = _gpu_items(items)
    if chosen and cuda_available():
        _EARLY.add(module.__name__)
        module.gpu_ahead(chosen, _start)


def pytest_collection_finish(session):
    """On a machine with a GPU, each test module that defines ``gpu_ahead(items, start)`` gets its
    selected, unskipped ``gpu`` tests and starts their slow work (a batch of every case, a probe, a
    sanitized suite: each its own worker processes on the one GPU) with ``start(key, fn, *args)``;
    each test then takes its result with the ``ahead`` fixture: ``ahead(key, fn, *args)``. The GPU
    suite's wall time is then its longest piece, not the sum of them (issue 40); a test run alone,
    or on a machine where nothing was started, runs ``fn`` itself, with the same assertions. Under a
    plain ``-m gpu`` a module's work started when it was collected (``pytest_collectreport``)."""
    if not cuda_available() or getattr(session.config.option, "collectonly", False):
        return
    chosen: dict = {}
    for item in _gpu_items(session.items):
        chosen.setdefault(item.module, []).append(item)
    for module, items in chosen.items():
        if hasattr(module, "gpu_ahead") and module.__name__ not in _EARLY:
            module.gpu_ahead(items, _start)


def pytest_sessionfinish(session, exitstatus):
    stop = bool(_POOL) and exitstatus == pytest.ExitCode.INTERRUPTED  # Ctrl-C (or a collection error): no test
    if stop:  # takes the work started ahead, so its worker processes end now rather than the pool waiting them out
        from harness.run.isolate import WORKERS
        WORKERS.stop()
    for pool in _POOL:
        pool.shutdown(wait=True, cancel_futures=True)
    if stop:
        WORKERS.reopen()  # (the next session in this process starts workers again)
    _POOL.clear()
    _STARTED.clear()
    _EARLY.clear()


@pytest.fixture
def ahead():
    """``ahead(key, fn, *args)``: the result of GPU work started ahead (see pytest_collection_finish)."""
    return _take


def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU (none on this machine)")
    for item in items:
        if item.get_closest_marker("gpu") is not None and not cuda_available():  # the mark, not a keyword: a
            # checkout in a folder named gpu makes "gpu" a keyword of every test
            item.add_marker(skip_gpu)


# ---------------------------------------------------------------- make_case: a synthetic case folder

CASE_PY = '''\
"""Inputs and reference: the mean of each row of a matrix whose width is not a power of two."""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, rows, cols):
    return {"x": guarded(torch.randn(rows, cols, generator=gen) + 1.0, device, row_pad=16),
            "out": output((rows,), torch.float32, device)}


def reference(x):
    return x.double().mean(dim=1)
'''

KERNEL = '''\
"""{doc}"""

import torch
import triton
import triton.language as tl


@triton.jit
def row_mean_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    {store}


def row_mean(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    rows, n_cols = x.shape
    row_mean_kernel[(rows,)](x, out, n_cols, x.stride(0), BLOCK=triton.next_power_of_2(n_cols))
    return out
'''
BROKEN_STORE = "tl.store(out_ptr + row, tl.sum(x) / BLOCK)  # BUG: divides by the block width, not n_cols"
FIXED_STORE = "tl.store(out_ptr + row, tl.sum(x) / n_cols)  # FIX: divide by the real number of columns"

TITLE = "Row mean divided by BLOCK: right for power-of-two widths, too small for the rest"
META = {
    "title": TITLE,
    "category": "reduction",
    "defect": "padding-contamination",
    "summary": "A row mean divides the masked tl.sum by the block width instead of n_cols.",
    "launcher": "row_mean",
    "seen_in": ["https://triton-lang.org/main/getting-started/tutorials/05-layer-norm.html"],
    "expect": {"gpu": "wrong", "interpreter": "wrong"},
    "run": {"trials": {"gpu": 3, "interpreter": 1}},
    "compare": {"rtol": 1e-5, "atol": 1e-6, "deterministic": True},
    "sizes": {"gpu": {"rows": 4096, "cols": 1000}, "interpreter": {"rows": 8, "cols": 100}},
}

README = f'''\
# {TITLE}

A row mean divides by the block width; only power-of-two widths come out right.

| category | defect | broken on GPU | broken under the interpreter |
|---|---|---|---|
| reduction | padding-contamination | wrong | wrong |

## What you would write

```python
tl.store(out_ptr + row, tl.sum(x) / BLOCK)
```

## What happens

### On a GPU
<!-- recorded:gpu -->
broken: wrong, fixed: ok
<!-- /recorded:gpu -->

### Under the interpreter
<!-- recorded:interpreter -->
broken: wrong, fixed: ok
<!-- /recorded:interpreter -->

## Why

The masked lanes add nothing to the sum but count in the divisor.

## The fix

```diff
-    tl.store(out_ptr + row, tl.sum(x) / BLOCK)
+    tl.store(out_ptr + row, tl.sum(x) / n_cols)
```

## How to catch it

Test a width that is not a power of two.

## Performance

Not an operator.

## Seen in the wild

The [LayerNorm tutorial](https://triton-lang.org/main/getting-started/tutorials/05-layer-norm.html)
divides by N.
'''

TEXTS = {
    "case.py": CASE_PY,
    "broken.py": KERNEL.format(doc="Row mean over BLOCK lanes, divided by BLOCK.", store=BROKEN_STORE),
    "fixed.py": KERNEL.format(doc="Row mean divided by the number of real columns.", store=FIXED_STORE),
    "README.md": README,
}


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"no TOML for {type(v).__name__}")


def to_toml(meta: dict) -> str:
    """``meta`` as TOML: scalars first, then one [table] per dict (and [table.sub] per dict in it)."""
    lines = [f"{k} = {toml_value(v)}" for k, v in meta.items() if not isinstance(v, dict)]
    for name, table in ((k, v) for k, v in meta.items() if isinstance(v, dict)):
        inner = {k: v for k, v in table.items() if not (isinstance(v, dict) and name == "sizes")}
        if inner or len(inner) == len(table):
            lines += ["", f"[{name}]"] + [f"{k} = {toml_value(v)}" for k, v in inner.items()]
        for sub, values in ((k, v) for k, v in table.items() if k not in inner):
            lines += ["", f"[{name}.{sub}]"] + [f"{k} = {toml_value(v)}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def merged(base: dict, changes: dict) -> dict:
    """``base`` with ``changes`` laid over it: dicts merge, None deletes a key."""
    out = copy.deepcopy(base)
    for k, v in changes.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = merged(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def gpu_record(slug: str, meta: dict) -> str:
    """recorded/gpu.json as 'harness record' writes it, dated now, every verdict as declared."""
    expect = meta.get("expect")  # fields may be malformed on purpose: then the run is "wrong"
    expected = expect.get("gpu", "wrong") if isinstance(expect, dict) else "wrong"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    verdicts = [{"variant": v, "call": 0, "expected": e, "observed": e, "as_declared": True}
                for v, e in (("broken", expected), ("fixed", "ok"))]
    return json.dumps({"case": slug, "backend": "gpu", "env": [{"backend": "gpu", "date": date}],
                       "verdicts": verdicts}, indent=2) + "\n"


def write(path, content) -> None:
    """``content`` at ``path``: text, bytes as they are, a dict as a folder of them ({} an empty one), None nothing."""
    if content is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, dict):
        path.mkdir(exist_ok=True)
        for name, inner in content.items():
            write(path / name, inner)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content)
    else:
        raise TypeError(f"make_case: no file for a {type(content).__name__} ({path.name})")


@pytest.fixture
def make_case(tmp_path):
    """A function that writes a complete, valid case folder and returns its path.

    ``make_case(slug="row-mean-divides-by-block", *, root=None, files=None, fields=None)``

    - ``root``: the cases folder (default ``tmp_path / "cases"``)
    - ``fields``: laid over case.toml's fields (``make_case.meta``): nested dicts merge, None deletes
    - ``files``: file name (``recorded/gpu.json`` included) -> what to write there: text, bytes (written
      as they are: a file that is not UTF-8), None to leave the file out, or a dict to put a folder in
      its place (name -> the same again; ``{}`` an empty folder); a ``case.toml`` here replaces the one
      written from the fields

    The folder has every file, a recorded GPU run dated now and a filled-in write-up, so
    ``check --no-run`` finds nothing in it. ``make_case.texts`` holds the default texts,
    ``make_case.meta`` the default fields and ``make_case.meta_with(fields)`` them with ``fields`` laid over;
    ``make_case.names`` is every file it writes, so ``files=dict.fromkeys(make_case.names)`` leaves an empty folder.
    """
    def make(slug="row-mean-divides-by-block", *, root=None, files=None, fields=None):
        folder = (root or tmp_path / "cases") / slug
        folder.mkdir(parents=True, exist_ok=True)
        meta = merged(META, fields or {})
        files = {"case.toml": to_toml(meta), **TEXTS, "recorded/gpu.json": gpu_record(slug, meta), **(files or {})}
        gpu = files.pop("recorded/gpu.json")
        for name, content in files.items():
            write(folder / name, content)
        write(folder / "recorded" / "gpu.json", gpu)  # written last: newer than the code
        return folder

    make.texts, make.meta = dict(TEXTS, **{"case.toml": to_toml(META)}), copy.deepcopy(META)
    make.names = (*make.texts, "recorded/gpu.json")
    make.meta_with = lambda fields: merged(META, fields)  # case.toml's fields with ``fields`` laid over them
    make.kernel, make.broken_store, make.fixed_store = KERNEL, BROKEN_STORE, FIXED_STORE
    return make


@pytest.fixture(autouse=True)
def _each_test_starts_where_the_last_did_not_leave_it():
    """Each test starts in the folder the session started in, with no kernels recorded as launched by
    earlier tests in this process (``triton_compat.LAUNCHED``: what the probe's kernel facts, block
    sizes and lint cross-check read): a test that changes either leaves nothing behind for the next."""
    import os
    import sys

    cwd = os.getcwd()
    compat = sys.modules.get("harness.run.triton_compat")
    launched = dict(compat.LAUNCHED) if compat is not None else None
    wide = set(compat.WIDE) if compat is not None else None
    if compat is not None:
        compat.LAUNCHED.clear()
        compat.WIDE.clear()
    yield
    os.chdir(cwd)
    compat = sys.modules.get("harness.run.triton_compat")
    if compat is not None:
        compat.LAUNCHED.clear()
        compat.LAUNCHED.update(launched or {})
        compat.WIDE.clear()
        compat.WIDE.update(wide or ())
