"""The probe's detectors: one module each, in one registry.

A detector is a module of this package that defines ``DETECTOR = Detector(...)``; the
registry finds it (adding a detector touches that one file). Each runs inside a worker
process (``harness.probe.worker``) with a ``harness.probe.context.Context`` and returns
a list of ``harness.probe.findings.Finding``.

- ``backends``: where it runs; ``process``: detectors with the same number run in order in
  one process, the processes side by side (``--jobs``); ``rank``: its place in the report, and in
  its process unless ``order`` gives it another on a backend (backend -> a rank to run by there).
- ``skip(ctx)``: why it cannot apply to this kernel (it is then skipped, with the reason,
  and costs nothing), or None. It is asked after the detectors before it in its process ran,
  so it can use what they saw (``ctx.board``: atomics, autotune).
- ``partial(ctx)``: what it found before the probe's budget ended in the middle of it (its
  findings so far, unfinished: shape fuzzing's failures unshrunk), or None (nothing kept).
- ``codes``: every code it can emit, each a ``harness.probe.findings.Code`` (severity, meaning, the cases
  that teach it); README's and docs/detectors.md's code tables are generated from them (``python -m
  harness.probe.codes``) and a test fails on a code emitted that no detector declares.
- ``holds(ctx)``: seconds at the end of the probe's budget that the detectors before it in its process leave it
  (``Budget.holding``), asked before each of them once the defaults' launch was seen; None: nothing kept.
- ``death_code``: the code of its worker dying in it (P001; the large detector's P404: a crash in its run past
  2**31 elements is what that run shows).
- ``case``: its case checks (``harness.probe.casecheck``): how ``detect`` and ``report`` judge a casebook
  case's recorded runs by the same idea (``harness.probe.cases`` collects them; ``case_runs`` makes the
  runs). A detector with no ``backends`` is a case check only (the GPU against the interpreter): the probe
  never runs it.
- ``tool``: a tool (on a GPU compute-sanitizer's memcheck and racecheck, TRITON_DEBUG and Triton's sanitizers; on
  the interpreter triton-viz) that runs the reference detector under itself: ``tool.how(options)`` says how to start the process (None: the tool is not here),
  ``tool.findings(output)`` reads what it printed.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Tool:
    how: Callable[[dict], dict | str | None]  # (the request's options) -> {"wrapper": [...], "extra_env": {...},
    # "log_file": bool, "small": bool, or "interpreter" for the smallest sizes (``Target.smallest_sizes``)}; None:
    # the tool is not here (not run, ``missing`` says so); a str: why it does not apply here (skipped, with it)
    findings: Callable[[str, str, str], list]  # (detector name, backend, output) -> findings
    missing: str = ""  # the note where ``how`` says the tool is not here (else: "<name> not found (put it on PATH...)")


@dataclass(frozen=True)
class Detector:
    name: str
    what: str
    run: Callable | None  # (ctx) -> list[Finding]; None for a tool (it runs the reference detector)
    backends: tuple = ("interpreter", "gpu")
    process: dict | None = None  # backend -> process number
    rank: int = 0
    order: dict | None = None  # backend -> the rank it runs by in its process there (default: ``rank``)
    skip: Callable | None = None  # (ctx) -> reason it does not apply, or None
    tool: Tool | None = None
    timeout_severity: str = "error"  # a detector stopped at its timeout: the kernel hung (P002), or only slow
    # kept to the probe's --budget (False, or a function of the request's options saying so: an opt-in tier that
    # sets its own sizes and time, as ``--large`` asked for)
    budgeted: bool | Callable = True
    partial: Callable | None = None  # (ctx) -> its findings so far, where the budget's end stopped it
    codes: tuple = ()  # the findings.Code of every code it can emit (generated tables: harness.probe.codes)
    holds: Callable | None = None  # (ctx) -> seconds of the budget the detectors before it in its process leave it
    # the code of its process dying in it (P001 for most: a crash at sizes it chose; the large detector's runs past
    # 2**31 elements are what the crash shows: P404)
    death_code: str = "P001"
    case: tuple = ()  # its case checks (harness.probe.casecheck.CaseCheck): how detect and report judge a casebook
    # case's runs by the same idea; a detector with no backends is a case check only

    @property
    def probes(self) -> bool:
        """Whether ``harness probe`` runs it on a user's kernel (a case check only does not)."""
        return bool(self.backends) and (self.run is not None or self.tool is not None)

    def keeps_budget(self, options: dict) -> bool:
        """Whether it keeps to the probe's --budget, with the request's ``options``."""
        return bool(self.budgeted(options)) if callable(self.budgeted) else bool(self.budgeted)

    def process_on(self, backend: str) -> int:
        return (self.process or {}).get(backend, 0)

    def runs_at(self, backend: str) -> float:
        """Its place in its process on ``backend`` (``order``, else ``rank``)."""
        return (self.order or {}).get(backend, self.rank)


def discover(package: str, path, attr: str, kind: type) -> dict:
    """Every ``attr`` of type ``kind`` that a module of ``package`` defines, by name, ranked (the
    detectors here, the diagnosis experiments in ``harness.probe.experiments``)."""
    found = []
    for info in pkgutil.iter_modules(path):
        mod = importlib.import_module(f"{package}.{info.name}")
        if isinstance(getattr(mod, attr, None), kind):
            found.append(getattr(mod, attr))
    return {x.name: x for x in sorted(found, key=lambda x: (x.rank, x.name))}


@functools.cache
def registry() -> dict[str, Detector]:
    """Every detector of this package by name, in report order."""
    return discover(__name__, __path__, "DETECTOR", Detector)


def names() -> tuple[str, ...]:
    """The detectors ``harness probe`` runs (``--detectors``)."""
    return tuple(n for n, d in registry().items() if d.probes)


def on(backend: str) -> list[Detector]:
    return [d for d in registry().values() if backend in d.backends]


def batches(backend: str) -> list[list[str]]:
    """The detectors of ``backend`` grouped by process, each group in the order they run there (``runs_at``:
    rank order unless a detector's ``order`` says otherwise; ties in rank order)."""
    groups: dict[int, list] = {}
    for d in on(backend):
        groups.setdefault(d.process_on(backend), []).append(d)
    return [[d.name for d in sorted(groups[k], key=lambda d: d.runs_at(backend))] for k in sorted(groups)]


def backends(gpu_side: bool) -> tuple:
    """Where a detector with a GPU side switch (its module's ``GPU_SIDE``: layout, special) runs: the interpreter,
    and the GPU where ``gpu_side``."""
    return ("interpreter", "gpu") if gpu_side else ("interpreter",)


def uses_atomics_or_autotune(ctx) -> str | None:
    """A skip rule: repeat runs and first calls differ only through atomics (their order) or
    autotune (its benchmarking runs); a kernel with neither gives the same result each time."""
    s = ctx.board
    if s.atomics or s.autotune:
        return None
    if s.atomics is None:  # nothing ran yet in this process: ask the source
        from harness.probe.kernels import known_facts

        known_facts(ctx)
        if s.atomics or s.autotune:
            return None
    return "no atomics and no autotune in the kernels: identical runs give identical results"


def no_inputs_to_vary(ctx, pick, none: str) -> str | None:
    """A skip rule for a detector that varies some of the inputs ``make_inputs`` gives at the default sizes:
    why it does not apply (``make_inputs`` raised there: the reference detector says so; ``pick(target,
    inputs)`` chose none: ``none``), or None."""
    from harness.probe import execute as X

    t = ctx.target
    try:
        inputs = X.make(t, t.sizes, ctx.seed, ctx.backend)
    except Exception:  # noqa: BLE001  the reference detector says so
        return "make_inputs raised at the default sizes"
    return None if pick(t, inputs) else none


def kept_so_far(ctx, attr: str) -> list:
    """A ``partial``: the findings a detector keeps in ``ctx.board.<attr>`` while it runs, taken (and cleared)
    where the budget's end stopped it in a run."""
    found = getattr(ctx.board, attr) or []
    setattr(ctx.board, attr, None)
    return list(found)


EVERY = "every detector"  # the emitter of the codes the runner, the worker and ``context`` give any detector


@functools.cache
def codes() -> dict:
    """Every code the probe can emit, in code order: code -> (its ``Code``, the detectors that declare it, or
    ``EVERY`` for ``findings.EVERY_DETECTOR``); P205, the runner's comparison of the backends, as its own. A
    code declared twice differently is a programming error."""
    from harness.probe.findings import EVERY_DETECTOR, P205, P205_BY

    declared: dict = {c.code: (c, [EVERY]) for c in EVERY_DETECTOR}
    declared[P205.code] = (P205, [P205_BY])
    for det in registry().values():
        for c in det.codes:
            if c.code in declared and declared[c.code][0] != c:
                raise ValueError(f"harness.probe.detectors: {c.code} declared differently by {det.name}")
            declared.setdefault(c.code, (c, []))[1].append(det.name)
    return {k: (c, tuple(by)) for k, (c, by) in sorted(declared.items())}


def compute_sanitizer_how(tool: str, options: dict, small) -> dict | None:
    """``Tool.how`` of one of compute-sanitizer's tools (memcheck, racecheck): its own log file, the caching allocator
    off (its blocks would hide an access past a tensor), only the kernels the option ``tool_kernels`` names checked
    (``--kernel-name kne=...``), at the sizes ``small`` says; None where compute-sanitizer is not here."""
    from harness.run.gpu_tools import compute_sanitizer, kernel_filter, with_filter, wrapper

    cs = compute_sanitizer()
    if cs is None:
        return None
    only = kernel_filter(cs, [{"name": n} for n in options.get("tool_kernels") or []])
    return {"wrapper": with_filter(wrapper(cs, tool), only), "extra_env": {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"},
            "log_file": True, "small": small}
