"""Where the harness's seconds go: one line per worker process, when asked for.

With ``CASEBOOK_TIMINGS=FILE`` in the environment, every worker the harness starts
(``harness.run.isolate.run_process``) appends one JSON line to FILE when it ends::

    {"purpose": "main", "module": "harness.run.worker", "case": "add-missing-mask",
     "backend": "gpu", "variants": ["broken"], "forked": true, "wrapper": null, "tool": null,
     "env": [], "exit": 0, "hung": false, "started": 1795000000.0, "wall": 6.1, "cpu": 1.2,
     "marks": [["imported", null, 2.1], ["env", null, 3.0], ["start", "broken", 3.1], ...]}

``started`` is the wall-clock time the process started; ``cpu`` the worker's own CPU
seconds (all its threads; not a wrapper's), when it finished. ``marks`` are the worker's own events (``harness.run.worker``), in seconds from the
moment the harness started the process: importing, initialising CUDA, compiling, each
trial. ``purpose`` says what the run was for: ``main`` (the case's own run), or the
detector whose run it is (``harness.probe.case_runs`` sets it with ``purpose_of``).
``benchmarks/timeline.py`` sums a file up. Without the variable nothing is written.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import threading

ENV = "CASEBOOK_TIMINGS"
_PURPOSE: contextvars.ContextVar[str] = contextvars.ContextVar("casebook_run_purpose", default="main")
_LOCK = threading.Lock()


@contextlib.contextmanager
def purpose_of(name: str):
    """Runs started inside (in this thread) are logged as ``name``'s."""
    token = _PURPOSE.set(name)
    try:
        yield
    finally:
        _PURPOSE.reset(token)


def record(*, module: str, args: dict, backend: str, forked: bool, wrapper: list | None, extra_env: dict | None,
           returncode, hung: bool, t0: float, t1: float, events: list[dict]) -> None:
    """One finished worker process, appended to ``$CASEBOOK_TIMINGS`` (a no-op without it)."""
    path = os.environ.get(ENV)
    if not path:
        return
    marks = [[e.get("event"), e.get("variant"), round(e["t"] - t0, 3)]
             for e in events if isinstance(e.get("t"), (int, float))]
    line = {"purpose": _PURPOSE.get(), "module": module, "case": os.path.basename(str(args.get("path", ""))),
            "backend": backend, "variants": args.get("variants") or [], "forked": forked,
            "wrapper": os.path.basename(wrapper[0]) if wrapper else None,
            "tool": _tool(wrapper), "env": sorted(extra_env or {}), "exit": returncode, "hung": hung,
            "started": round(t0, 3), "wall": round(t1 - t0, 3), "marks": marks,
            "cpu": next((e["cpu"] for e in reversed(events) if isinstance(e.get("cpu"), (int, float))), None)}
    try:
        with _LOCK, open(path, "a") as f:
            f.write(json.dumps(line) + "\n")
    except OSError:
        pass  # a timing log is never worth a failed run


def _tool(wrapper: list | None) -> str | None:
    if wrapper and "--tool" in wrapper[:-1]:
        return wrapper[wrapper.index("--tool") + 1]
    return None
