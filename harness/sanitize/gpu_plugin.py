"""The pytest plugin of ``sanitize --backend gpu``'s GPU pass, loaded (``-p``) into the user's pytest
run under compute-sanitizer by ``harness.sanitize.child``; nothing else loads it.

A memcheck error destroys the process's CUDA context (compute-sanitizer's default; a sticky error
every later CUDA call returns), and the process often dies of it (``Fatal Python error: Aborted``).
So the runner (``harness.sanitize.gpu.run_pytest``) runs the suite in as many processes as it takes,
and this plugin tells it where each one got to, as JSON lines in the file ``PROGRESS_ENV`` names:

- a spare (``TURN_ENV`` set: the runner starts the next process while one runs) collects the suite,
  then waits until the file ``TURN_ENV`` names appears (its turn: the tests of the processes before
  it are in ``DONE_ENV``'s file by then);
- ``{"collected": [node ids]}`` once collected, the tests run before in another process deselected
  (those ``DONE_ENV``'s file lists, one node id a line);
- ``{"start": id, "log": bytes}`` before each test, with the size of compute-sanitizer's log then
  (``LOG_ENV``): a report written after that offset and before the next start is that test's;
- ``{"end": id}`` after it, or ``{"end": id, "lost": message}`` when the CUDA context no longer
  answers (or memcheck reported during the test): the process then exits at once
  (``EXIT_LOST``), and the runner goes on with the rest of the suite in a fresh one.
"""

from __future__ import annotations

import json
import os

PROGRESS_ENV = "CASEBOOK_SANITIZE_GPU_PROGRESS"
DONE_ENV = "CASEBOOK_SANITIZE_GPU_DONE"
LOG_ENV = "CASEBOOK_SANITIZE_GPU_LOG"
TURN_ENV = "CASEBOOK_SANITIZE_GPU_TURN"
TURN_POLL = 0.02  # seconds between a spare's looks for its turn
EXIT_LOST = 86  # this process's CUDA context is lost: the runner starts another for the tests left


def _write(record: dict) -> None:
    path = os.environ.get(PROGRESS_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def _log_size() -> int:
    try:
        return os.path.getsize(os.environ.get(LOG_ENV, ""))
    except OSError:
        return 0


def done_ids() -> set:
    path = os.environ.get(DONE_ENV)
    if not path or not os.path.exists(path):
        return set()
    with open(path, encoding="utf-8") as f:
        return {line.rstrip("\n") for line in f if line.strip()}


def take_turn(path: str) -> None:
    """Tell the spare waiting on ``path`` that its turn has come (the file appears whole)."""
    from pathlib import Path

    from harness.core.fileio import write_text

    write_text(Path(path), "run\n")


def wait_for_turn() -> None:
    """A spare's wait, its suite collected, until its turn comes (the runner ends it where none does)."""
    import time

    path = os.environ.get(TURN_ENV)
    while path and not os.path.exists(path):
        time.sleep(TURN_POLL)


def pytest_collection_modifyitems(config, items):
    wait_for_turn()
    done = done_ids()
    if done:
        kept = [i for i in items if i.nodeid not in done]
        config.hook.pytest_deselected(items=[i for i in items if i.nodeid in done])
        items[:] = kept
    _write({"collected": [i.nodeid for i in items]})


def context_lost() -> str:
    """Why this process's CUDA context can no longer be trusted, or "": a synchronize that fails
    (the sticky error of a kernel memcheck stopped). Without torch, or CUDA never initialised, "". """
    import sys

    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return ""
    try:
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001: any CUDA error here is the context's
        text = str(e).strip()
        return f"{type(e).__name__}: {text.splitlines()[0] if text else ''}"
    return ""


def pytest_runtest_protocol(item, nextitem):
    _write({"start": item.nodeid, "log": _log_size()})


def pytest_runtest_logfinish(nodeid, location):
    start = _last_start_log()
    lost = context_lost()
    if not lost and _log_size() > start and _reported_since(start):
        lost = "compute-sanitizer reported an error during the test"
    if lost:
        _write({"end": nodeid, "lost": lost})
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_LOST)
    _write({"end": nodeid})


def _last_start_log() -> int:
    path = os.environ.get(PROGRESS_ENV)
    if not path or not os.path.exists(path):
        return 0
    last = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if "start" in d:
                last = d.get("log", 0)
    return last


def _reported_since(offset: int) -> bool:
    try:
        with open(os.environ.get(LOG_ENV, ""), encoding="utf-8", errors="replace") as f:
            f.seek(offset)
            return "Invalid __global__" in f.read()
    except OSError:
        return False
