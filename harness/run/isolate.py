"""Run each (case, variant, backend) in its own process, with a timeout.

Why a process each:

- ``TRITON_INTERPRET`` is read when ``@triton.jit`` decorates a function, so GPU and
  interpreter runs cannot share a process;
- under the interpreter an unmasked access reads or writes raw host memory and can
  segfault (exit 139);
- on the GPU an illegal address poisons the CUDA context, and a spin on a lock hangs.

A crash or a timeout comes back as a result like any other, never as an exception.
``run_process`` is the one place the harness starts a worker; ``run_isolated`` runs
the case worker (``harness.run.worker``) and ``harness.commands.bench`` the bench
worker (``harness.run.bench_worker``) through it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field

from harness.core.discovery import REPO_ROOT
from harness.core.events import RunResult
from harness.core.spec import CaseSpec

TAIL_BYTES = 6000
# Address-space limit for an interpreter worker, in GiB: a runaway allocation becomes a
# crash row instead of taking the machine's memory. CASEBOOK_WORKER_MEMORY_GB overrides
# it (0: no limit). GPU workers get none: CUDA reserves far more address space than it uses.
DEFAULT_MEMORY_GB = 8
MEMORY_ENV = "CASEBOOK_WORKER_RLIMIT_AS"


class Workers:
    """Every worker process group this harness started and has not yet seen end.

    ``stop()`` (on SIGINT, SIGTERM or exit) kills them all at once and refuses new
    ones, so nothing outlives the command, a hanging kernel included.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._live: dict[int, subprocess.Popen] = {}
        self.stopping = threading.Event()

    def start(self, cmd, **kw) -> subprocess.Popen | None:
        with self._lock:
            if self.stopping.is_set():
                return None
            proc = subprocess.Popen(cmd, start_new_session=True, **kw)
            self._live[proc.pid] = proc
            return proc

    def done(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._live.pop(proc.pid, None)

    def reopen(self) -> None:
        """Accept new workers again (the next command in the same process, as in tests)."""
        self.stopping.clear()

    def stop(self) -> int:
        """Kill every live worker's process group; return how many there were."""
        with self._lock:
            self.stopping.set()
            live = list(self._live.values())
        for proc in live:
            _kill_group(proc)
        return len(live)


WORKERS = Workers()


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def memory_limit_bytes(backend: str) -> int | None:
    if backend != "interpreter":
        return None
    try:
        gb = float(os.environ.get("CASEBOOK_WORKER_MEMORY_GB", DEFAULT_MEMORY_GB))
    except ValueError:
        gb = DEFAULT_MEMORY_GB
    return int(gb * 2**30) if gb > 0 else None


@dataclass
class Process:
    """How a worker process ended, and what it reported."""

    returncode: int | None = None
    hung: bool = False
    interrupted: bool = False  # never started, or killed, because the harness is stopping
    events: list = field(default_factory=list)  # the JSON lines it wrote, in order
    output_tail: str = ""


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def exit_message(code: int) -> str:
    if code < 0:
        return f"killed by {_signal_name(code)} (exit {128 - code})"
    return f"exit status {code}"


def worker_env(backend: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONFAULTHANDLER"] = "1"
    if backend == "interpreter":
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    return env


def gpu_count() -> int:
    import torch

    return torch.cuda.device_count()


def _read_events(path: str) -> list[dict]:
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a line cut short by a crash
    return out


def _tail(path: str) -> str:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - TAIL_BYTES))
        return f.read().decode(errors="replace")


def run_process(module: str, args: dict, *, backend: str, timeout: float, extra_env: dict | None = None,
                wrapper: list[str] | None = None) -> Process:
    """``python -m module '<args as JSON>'`` in a new session; ``args["events"]`` is set to
    a file the worker appends JSON lines to. Killed (its whole process group) on timeout."""
    res = Process()
    with tempfile.TemporaryDirectory(prefix="casebook-") as tmp:
        events, log = os.path.join(tmp, "events.jsonl"), os.path.join(tmp, "output.log")
        cmd = (wrapper or []) + [sys.executable, "-m", module, json.dumps({**args, "events": events})]
        env = worker_env(backend)
        env.update(extra_env or {})
        if (limit := memory_limit_bytes(backend)) is not None:
            env[MEMORY_ENV] = str(limit)  # the worker applies it to itself (harness.run.worker)
        with open(log, "wb") as out:
            proc = WORKERS.start(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 cwd=str(REPO_ROOT), env=env)
            if proc is None:
                res.interrupted = True
                return res
            _wait(proc, timeout, res)
        res.output_tail = _tail(log)
        res.events = _read_events(events)
    return res


def _wait(proc: subprocess.Popen, timeout: float, res: Process) -> None:
    try:
        res.returncode = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.wait()
        res.hung = True
    finally:
        if proc.poll() is None:  # interrupted while waiting: take the group down with us
            _kill_group(proc)
            proc.wait()
        WORKERS.done(proc)
    res.interrupted = WORKERS.stopping.is_set()


def _collect(res: RunResult, events: list[dict]) -> tuple[dict | None, bool]:
    """Sort the worker's events into ``res``; return its error event, if any, and whether it said done."""
    error, done = None, False
    for ev in events:
        kind = ev.pop("event", None)
        if kind == "done":
            done = True
        elif kind == "env":
            res.env = ev
        elif kind == "trial":
            res.trials.append(ev)
        elif kind == "probe":
            res.probes.append(ev)
        elif kind == "error":
            error = ev
    return error, done


def run_isolated(spec: CaseSpec, variant: str, backend: str, *, trials: int, seed: int,
                 timeout: float | None = None, save: str | None = None, extra_env: dict | None = None,
                 wrapper: list[str] | None = None, overrides: dict | None = None) -> RunResult:
    """Run one variant on one backend in a fresh process and collect what it reported.

    ``overrides`` goes to the worker as is: ``sizes``, ``calls`` or ``pad`` (guard padding).
    """
    res = RunResult(spec.slug, variant, backend, status="done", requested_trials=trials)
    if spec.expect[backend][0] == "skip":
        res.status, res.message = "skip", spec.skip_reason[backend]
        return res
    if backend == "gpu" and spec.gpus > 1 and (have := gpu_count()) < spec.gpus:
        res.status, res.unavailable = "skip", True
        res.message = f"needs {spec.gpus} GPUs; this machine has {have}"
        return res
    timeout = timeout or spec.timeout[backend]
    args = {"path": str(spec.path), "variant": variant, "backend": backend, "trials": trials,
            "seed": seed, "save": save, **(overrides or {})}
    proc = run_process("harness.run.worker", args, backend=backend, timeout=timeout, extra_env=extra_env,
                       wrapper=wrapper)
    res.returncode, res.output_tail = proc.returncode, proc.output_tail
    error, done = _collect(res, proc.events)
    expected = trials * ((overrides or {}).get("calls") or spec.calls)
    if proc.interrupted:
        res.status, res.message = "error", "interrupted: the harness was stopped"
    elif proc.hung:
        res.status, res.message = "hang", f"timed out after {timeout:.0f}s"
    elif error is not None:
        res.status = "crash" if error["phase"] == "launch" else "error"
        res.message = f"{error['type']}: {error['message']}".strip(": ")
        if error.get("traceback"):
            res.output_tail = error.get("traceback", "") + res.output_tail[-2000:]
    elif res.returncode:
        res.status, res.message = "crash", exit_message(res.returncode)
    elif not done or len(res.trials) < expected:
        # trusted only with its "done" event and every trial it was asked for
        res.status = "crash"
        res.message = f"the worker exited (status 0) after {len(res.trials)} of {expected} results, without finishing"
    return res
