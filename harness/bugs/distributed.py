"""The benchmark on a Ray cluster: each (entry, version) is one Ray task that runs
``harness.bugs.board.score_task`` (given as ``fn``) on whichever node Ray gives it, declaring what it needs (two
CPUs: the probe runs two detector processes side by side; one GPU on the GPU backend). The
rows come back to the caller and make the same scoreboard as a run on one machine.

Ray is optional (``pip install -e .[ray]``); the rest of the casebook never imports it. The
nodes need this repository at the same path or on ``PYTHONPATH`` (the task's runtime
environment sets it to this checkout), and each fetches upstream code into its own cache.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.errors import UsageError

REPO = str(Path(__file__).resolve().parents[2])
CPUS_PER_TASK = 2


def _ray():
    try:
        import ray
    except ImportError:
        raise UsageError("bugs --ray: Ray is not installed (python -m pip install -e '.[ray]')") from None
    return ray


CONNECT_S = 10.0  # a cluster's head answers a TCP connection at once; Ray itself retries for minutes


def reachable(address: str) -> None:
    """UsageError, in one line, when nothing listens at ``address``'s HOST:PORT (``auto`` and
    addresses without a port are left to Ray)."""
    import socket

    hostport = address.split("://", 1)[-1].rstrip("/")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=CONNECT_S).close()
    except OSError as e:
        raise UsageError(f"bugs --ray {address}: nothing answers there ({e.strerror or e})") from None


def run(fn, tasks: list[tuple], address: str, *, gpus: int = 0, progress=None, on_row=None) -> list:
    """``fn(*task)`` for each task as a Ray task; the rows in the order of ``tasks``."""
    ray = _ray()
    reachable(address)
    say = progress or (lambda _m: None)
    env = {"PYTHONPATH": os.pathsep.join(x for x in (REPO, os.environ.get("PYTHONPATH", "")) if x)}
    for key in ("CASEBOOK_BUGS", "CASEBOOK_BUG_CACHE", "CASEBOOK_FORKSERVER"):
        if key in os.environ:
            env[key] = os.environ[key]
    try:
        ray.init(address=address, runtime_env={"env_vars": env}, ignore_reinit_error=True, log_to_driver=False)
    except Exception as e:  # noqa: BLE001  (an address with no cluster, a version mismatch: one line)
        raise UsageError(f"bugs --ray {address}: {' '.join(str(e).split())[:200]}") from None

    @ray.remote(num_cpus=CPUS_PER_TASK, num_gpus=gpus, max_retries=0)
    def task(t):
        row = fn(*t)
        row["node"] = ray.get_runtime_context().get_node_id()
        return row

    try:
        pending = {task.remote(t): t for t in tasks}
        rows = {}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            t = pending.pop(done[0])
            try:
                rows[t] = ray.get(done[0])
            except Exception as e:  # noqa: BLE001  (the task's process died: a row, not the end)
                rows[t] = {"slug": t[0], "variant": t[1], "backend": t[2],
                           "error": f"could not run: the Ray task failed: {' '.join(str(e).split())[:200]}"}
            say(f"{t[0]} {t[1]}: done on node {rows[t].get('node', '?')[:8]}")
            if on_row is not None:
                on_row(rows[t])
        return [rows[t] for t in tasks]
    finally:
        ray.shutdown()
