"""The harness's side of ``harness.run.zygote``: a fork server per worker environment.

``spawn`` asks the server for a worker and returns a ``Child`` (the worker's keeper,
``harness.run.parent``), which ``isolate`` waits on, polls and ends exactly as it does a
``subprocess.Popen``.
A server serves one environment: a run whose environment differs (a test that set a
variable, a detector's own settings) gets a server of its own. When the server cannot
be had, ``spawn`` returns None and the caller starts a plain process instead.
``CASEBOOK_FORKSERVER=0`` turns the server off.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import threading
import time

START_TIMEOUT = 120.0  # seconds for the server to import torch and answer its first request


def enabled() -> bool:
    return os.environ.get("CASEBOOK_FORKSERVER", "1") != "0" and hasattr(os, "fork")


class Child:
    """A worker the server forked: ``pid``, ``returncode``, ``wait`` and ``poll`` as a Popen's."""

    def __init__(self):
        self.pid: int | None = None
        self.returncode: int | None = None
        self.kept = True  # the server's child is the worker's keeper: SIGTERM ends both, and all below
        self._started, self._ended = threading.Event(), threading.Event()

    def wait(self, timeout: float | None = None) -> int | None:
        if not self._ended.wait(timeout):
            raise subprocess.TimeoutExpired("forked worker", timeout)
        return self.returncode

    def poll(self) -> int | None:
        return self.returncode if self._ended.is_set() else None

    def _end(self, code: int) -> None:
        self.returncode = code
        self._ended.set()


class Server:
    """One ``python -m harness.run.zygote`` and the children it forked."""

    def __init__(self, env: dict, cwd: str):
        self.lock = threading.Lock()
        self.waiting: dict[int, Child] = {}
        self.children: dict[int, Child] = {}
        self.next_id, self.alive = 0, True
        self.proc = subprocess.Popen([sys.executable, "-m", "harness.run.zygote"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd,
                                     start_new_session=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            with self.lock:
                if "id" in msg and (child := self.waiting.pop(msg["id"], None)) is not None:
                    child.pid = msg["pid"]
                    self.children[child.pid] = child
                    child._started.set()
                elif "exit" in msg and (child := self.children.pop(msg["pid"], None)) is not None:
                    child._end(msg["exit"])
        self._died()

    def _died(self) -> None:
        """The server is gone: requests fail, and children still running are watched until they end."""
        with self.lock:
            self.alive = False
            for child in self.waiting.values():
                child._started.set()
            orphans, self.waiting, self.children = list(self.children.values()), {}, {}
        for child in orphans:
            threading.Thread(target=_watch, args=(child,), daemon=True).start()

    def spawn(self, module: str, args: str, log: str) -> Child | None:
        """A child running ``module.run(args)``, its output in ``log``; it inherits the
        server's environment and folder."""
        child = Child()
        with self.lock:
            if not self.alive:
                return None
            req, self.next_id = {"id": self.next_id, "module": module, "args": args, "log": log}, self.next_id + 1
            self.waiting[req["id"]] = child
            try:
                self.proc.stdin.write((json.dumps(req) + "\n").encode())
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                self.waiting.pop(req["id"], None)
                return None
        child._started.wait(START_TIMEOUT)
        return child if child.pid is not None else None

    def idle(self) -> bool:
        """No child running and none asked for."""
        with self.lock:
            return not self.children and not self.waiting

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass


def _watch(child: Child) -> None:
    """A child whose server died: its exit status is lost; say it was killed once it is gone."""
    while True:
        try:
            os.kill(child.pid, 0)
        except ProcessLookupError:
            child._end(-signal.SIGKILL)
            return
        except PermissionError:
            pass
        time.sleep(0.2)


_SERVERS: dict[str, Server] = {}  # the most recently used last
_LOCK = threading.Lock()
# variables that name what the parent is doing, not what a worker runs with: not part of a server's key (pytest
# sets PYTEST_CURRENT_TEST for each test: a server per test, each holding torch, had 64 alive in one run)
VOLATILE = ("PYTEST_CURRENT_TEST",)
MAX_SERVERS = 3  # servers kept alive at once: past it the least recently used idle one is closed


def key(env: dict) -> str:
    """The server an environment is served by: the same for environments that differ only in ``VOLATILE``."""
    return json.dumps({k: v for k, v in env.items() if k not in VOLATILE}, sort_keys=True)


def spawn(module: str, args: str, log: str, env: dict, cwd: str) -> Child | None:
    """A worker forked from the server for ``env`` (started on first use), or None."""
    k = key(env)
    with _LOCK:
        server = _SERVERS.pop(k, None)
        if server is None or not server.alive:
            _retire(MAX_SERVERS - 1)
            try:
                server = Server(env, cwd)
            except OSError:
                return None
        _SERVERS[k] = server
    return server.spawn(module, args, log)


def _retire(keep: int) -> None:
    """Close the least recently used idle servers (no child running or asked for) until ``keep`` are left
    (under ``_LOCK``); a dead one is dropped. A busy one stays whatever the count: its children are running."""
    for k, s in list(_SERVERS.items()):
        if len(_SERVERS) <= keep:
            return
        if not s.alive or s.idle():
            del _SERVERS[k]
            s.close()


def stop_all() -> None:
    """Kill every server (the harness is stopping; their children are killed by the caller)."""
    with _LOCK:
        servers = list(_SERVERS.values())
        _SERVERS.clear()
    for s in servers:
        s.stop()


@atexit.register
def _close_all() -> None:
    for s in list(_SERVERS.values()):
        s.close()
