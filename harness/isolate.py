"""Run each (case, variant, backend) in its own process, with a timeout.

Why a process each:

- ``TRITON_INTERPRET`` is read when ``@triton.jit`` decorates a function, so GPU and
  interpreter runs cannot share a process;
- under the interpreter an unmasked access reads or writes raw host memory and can
  segfault (exit 139);
- on the GPU an illegal address poisons the CUDA context, and a spin on a lock hangs.

A crash or a timeout comes back as a result like any other, never as an exception.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from harness.discovery import REPO_ROOT
from harness.spec import CaseSpec


@dataclass
class RunResult:
    slug: str
    variant: str
    backend: str
    status: str  # "done", "crash", "hang", "error" (a setup problem), "skip"
    message: str = ""
    env: dict = field(default_factory=dict)
    trials: list = field(default_factory=list)  # the worker's "trial" events
    probes: list = field(default_factory=list)
    returncode: int | None = None
    output_tail: str = ""
    requested_trials: int = 0

    def to_json(self) -> dict:
        return dict(self.__dict__)


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


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
    timeout = timeout or spec.timeout[backend]
    with tempfile.TemporaryDirectory(prefix="casebook-") as tmp:
        events = os.path.join(tmp, "events.jsonl")
        log = os.path.join(tmp, "output.log")
        args = {"path": str(spec.path), "variant": variant, "backend": backend, "trials": trials,
                "seed": seed, "events": events, "save": save, **(overrides or {})}
        cmd = (wrapper or []) + [sys.executable, "-m", "harness.worker", json.dumps(args)]
        env = worker_env(backend)
        env.update(extra_env or {})
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    cwd=str(REPO_ROOT), env=env, start_new_session=True)
            try:
                res.returncode = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                res.status, res.message = "hang", f"timed out after {timeout:.0f}s"
        with open(log, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 6000))
            res.output_tail = f.read().decode(errors="replace")
        error = None
        if os.path.exists(events):
            for line in open(events):
                try:
                    ev = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by a crash
                kind = ev.pop("event", None)
                if kind == "env":
                    res.env = ev
                elif kind == "trial":
                    res.trials.append(ev)
                elif kind == "probe":
                    res.probes.append(ev)
                elif kind == "error":
                    error = ev
    if res.status == "hang":
        return res
    if error is not None:
        res.status = "crash" if error["phase"] == "launch" else "error"
        res.message = f"{error['type']}: {error['message']}".strip(": ")
        if error.get("traceback"):
            res.output_tail = error.get("traceback", "") + res.output_tail[-2000:]
    elif res.returncode and res.returncode < 0:
        res.status, res.message = "crash", f"killed by {_signal_name(res.returncode)} (exit {128 - res.returncode})"
    elif res.returncode:
        res.status, res.message = "crash", f"exit status {res.returncode}"
    return res
