"""Running many (case, variant, backend) combinations, each isolated, and judging them.

GPU runs go one at a time (timing-sensitive and memory-hungry); interpreter runs share
``jobs`` worker processes. Each run is its own process (``harness.run.isolate``), so a
crash or a hang in one never touches another's result.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from harness.core.verdict import judge
from harness.run.isolate import run_isolated


def trials_for(spec, backend: str, override: int | None) -> int:
    """The one place a run's trial count is decided: ``--trials`` if given, else the case's own."""
    return override or spec.trials[backend]


def run_case_matrix(specs, backends, trials, seed, jobs=2, variants=None, save_root=None):
    """Run every (case, variant, backend); returns {slug: (runs, verdicts)}.

    ``variants`` defaults to each case's own: broken, fixed, and fast where it has one.
    """
    gpu_lock = threading.Lock()
    tasks = [(s, v, b) for s in specs for b in backends for v in (variants or s.variants)]

    def one(task):
        spec, variant, backend = task
        n = trials_for(spec, backend, trials)
        save = str(save_root / spec.slug / f"{variant}-{backend}") if save_root else None
        if backend == "gpu":
            with gpu_lock:
                run = run_isolated(spec, variant, backend, trials=n, seed=seed, save=save)
        else:
            run = run_isolated(spec, variant, backend, trials=n, seed=seed, save=save)
        return run, judge(spec, run)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, tasks))
    out = {}
    for (spec, _, _), (run, verdicts) in zip(tasks, results):
        runs, vs = out.setdefault(spec.slug, ([], []))
        runs.append(run)
        vs.extend(verdicts)
    return out
