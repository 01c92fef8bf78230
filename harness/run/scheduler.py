"""Running many cases, each (case, backend) in its own worker process, and judging them.

One worker runs every variant of a case on a backend (fixed first, broken last; see
``harness.run.isolate.run_variants``), or one worker per variant when there are slots to
spare (a single case); a crash or hang in one variant costs a fresh
process for the variants left, never another case's result. Interpreter workers share
``jobs`` CPU slots; GPU workers run ``gpu_jobs`` at once on the one GPU (independent
processes; ``bench`` times alone, in its own command).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from harness.core.verdict import judge
from harness.run.isolate import run_variants, side_by_side

def default_gpu_jobs() -> int:
    """Worker processes on one GPU at once: most of a worker's life is CPU (imports,
    compiling), so up to one per two CPU cores beyond the first two, at most 12."""
    return max(2, min(12, ((os.cpu_count() or 4) - 2)))


def trials_for(spec, backend: str, override: int | None) -> int:
    """The one place a run's trial count is decided: ``--trials`` if given, else the case's own."""
    return override or spec.trials[backend]


def run_order(variants) -> list[str]:
    """Fixed (and fast) before broken: a broken kernel that corrupts host memory under the
    interpreter, or poisons the CUDA context, runs last in its process."""
    return [v for v in variants if v != "broken"] + [v for v in variants if v == "broken"]


def gpu_jobs() -> int:
    try:
        return max(1, int(os.environ.get("CASEBOOK_GPU_JOBS") or default_gpu_jobs()))
    except ValueError:
        return default_gpu_jobs()


# An autotuned call benchmarks every config (each one compiled, then launched for about
# 125 ms of GPU time by Triton's do_bench) before its own launch: on an H200 with a cold cache
# such a call costs about ten plain ones (docs/measurements/timelines/gpu-h200-issue40.md), so
# the autotuned cases start first, beside the cheap ones' compiling. Their benchmarks take turns
# on the GPU (``triton_compat.in_turns``; docs/measurements/speed-gpu-h200-turns.md).
AUTOTUNED_CALL = 10


def call_cost(spec) -> float:
    """A rough cost of one call of one variant, in plain calls."""
    return AUTOTUNED_CALL if "autotune" in spec.triggers else 1


def expected_cost(pair) -> float:
    """A rough cost, to start the longest runs first: a declared hang waits for its timeout."""
    spec, backend = pair
    hang = any("hang" in e for e in spec.expect[backend])
    return (spec.timeout[backend] if hang else 0) + spec.trials[backend] * spec.calls * len(spec.variants) * call_cost(spec)


def worker_groups(pairs, variants, slots: int) -> list[tuple]:
    """(spec, backend, variants) per worker: one worker per (case, backend), or, when there
    are fewer pairs than slots (a single case), one per variant, so that the variants run
    side by side instead of one after another. Either way a crash costs only its own worker.

    A heavy case of a batch keeps one worker: on one GPU its variants' autotuning would only
    share the GPU's time with each other, and each extra worker costs a start (on an H200,
    splitting the autotuned cases per variant made ``case --all`` slower, 37.5 s to 43-47 s:
    docs/measurements/speed-gpu-h200-split-per-variant.md)."""
    names = {(s.slug, b): list(variants or s.variants) for s, b in pairs}
    split = sum(len(v) for v in names.values()) <= slots
    return [(s, b, run_order(vs)) for s, b in pairs
            for vs in ([[v] for v in names[(s.slug, b)]] if split else [names[(s.slug, b)]])]


def run_many(pairs, trials=None, seed=0, jobs=2, variants=None, save_root=None) -> dict:
    """Run every (spec, backend) in ``pairs``, each in its own worker(s), in parallel:
    {(slug, backend): {variant: RunResult}}. Interpreter workers share ``jobs`` slots,
    GPU workers ``gpu_jobs()``."""
    gpu_slots = threading.Semaphore(gpu_jobs())
    on_gpu = any(b == "gpu" for _, b in pairs)
    slots = gpu_jobs() if on_gpu else max(1, jobs)

    def one(unit):
        spec, backend, names = unit
        save = {v: str(save_root / spec.slug / f"{v}-{backend}") for v in names} if save_root else None
        kwargs = dict(trials=trials_for(spec, backend, trials), seed=seed, save=save)
        if backend == "gpu":
            with gpu_slots:
                return run_variants(spec, names, backend, **kwargs)
        return run_variants(spec, names, backend, **kwargs)

    units = worker_groups(sorted(pairs, key=expected_cost, reverse=True), variants, slots)
    workers = max(1, jobs) + (gpu_jobs() if on_gpu else 0)
    out: dict = {}
    with side_by_side(min(workers, len(units))), ThreadPoolExecutor(max_workers=workers) as pool:
        for (spec, backend, _), runs in zip(units, pool.map(one, units)):
            out.setdefault((spec.slug, backend), {}).update(runs)
    return out


def run_case_matrix(specs, backends, trials, seed, jobs=2, variants=None, save_root=None):
    """Run every (case, variant, backend); returns {slug: (runs, verdicts)}, runs in the
    order broken, fixed, fast for each backend.

    ``variants`` defaults to each case's own: broken, fixed, and fast where it has one.
    """
    pairs = [(s, b) for s in specs for b in backends]
    done = run_many(pairs, trials, seed, jobs, variants, save_root)
    out = {}
    for spec, backend in pairs:
        runs, vs = out.setdefault(spec.slug, ([], []))
        for variant in (variants or spec.variants):
            run = done[(spec.slug, backend)][variant]
            runs.append(run)
            vs.extend(judge(spec, run))
    return out
