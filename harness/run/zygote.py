"""A fork server for workers: torch and Triton are imported once, here, and each worker
run is a fork of this process, not a fresh interpreter.

Usage (by ``harness.run.isolate``, not by people)::

    [TRITON_INTERPRET=1] python -m harness.run.zygote

It reads one JSON request a line on stdin, ``{"id", "module", "args", "log"}``, and for
each forks a child that starts a session of its own, sends its output to ``log`` and
becomes the keeper (``harness.run.parent``) of a worker it forks, which runs
``module.run(args)`` (``harness.run.worker``, or the probe's ``harness.probe.worker``)
with this process's environment and folder (the
harness starts one server per worker environment). On stdout it answers
``{"id", "pid"}`` once the child's session exists, and ``{"pid", "exit"}`` when the child
ends (the exit status as ``subprocess`` gives it: negative for a signal). It exits when
its stdin closes; a keeper whose server is gone ends its worker and everything below it.

Each child is a copy of a process that has run no kernel and made no tensor, so runs
stay as isolated from each other as separate processes are: a crash or a hang is the
child's alone. Importing torch is about two seconds of every worker's start on a CPU.

For GPU workers the server never touches CUDA: a process that has initialised CUDA
cannot hand a working CUDA to its forks, so each child initialises its own (its own
context, as a fresh process has). ``main`` checks that importing left CUDA untouched,
and exits otherwise: the harness then starts plain processes.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys

from harness.run import parent


def _send(fd: int, msg: dict) -> None:
    os.write(fd, (json.dumps(msg) + "\n").encode())


def _child(req: dict, ready: int, proto: int) -> None:
    """In the forked child: a session of its own, the log as stdout and stderr, then the worker's
    keeper (``harness.run.parent.keep``), which forks the worker and ends as it ends."""
    try:
        os.setsid()
        os.write(ready, b"x")
        os.close(ready)
        os.close(proto)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        log = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(null)
        sys.stdout.reconfigure(line_buffering=True)
        sys.stderr.reconfigure(line_buffering=True)
        parent.keep(lambda: _worker(req))
    except BaseException:  # noqa: BLE001  the child must end here, whatever happened
        import traceback

        traceback.print_exc()
    finally:
        os._exit(1)


def _worker(req: dict) -> None:
    """In the keeper's child: the worker module's ``run``, then this process ends with its status."""
    code = 1
    try:
        import faulthandler
        import importlib

        from harness.run import worker

        faulthandler.enable()
        worker.apply_memory_limit()
        code = importlib.import_module(req["module"]).run(json.loads(req["args"]))
    except BaseException:  # noqa: BLE001  the child must end here, whatever happened
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _spawn(req: dict, proto: int) -> None:
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        _child(req, ready_w, proto)
    os.close(ready_w)
    os.read(ready_r, 1)  # the child's session exists: the harness may kill its group from now on
    os.close(ready_r)
    _send(proto, {"id": req["id"], "pid": pid})


def _reap(proto: int) -> None:
    for pid, status in parent.reaped():
        _send(proto, {"pid": pid, "exit": os.waitstatus_to_exitcode(status)})


def main() -> int:
    import torch  # noqa: F401  the point of this process: imported once
    import triton  # noqa: F401

    from harness.run import worker  # noqa: F401

    if torch.cuda.is_initialized():  # forks could not use CUDA: no server (the harness starts plain workers)
        return 1
    proto = os.dup(1)  # the answers; fd 1 itself goes to each child's log
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    stdin, buf = sys.stdin.fileno(), b""
    _send(proto, {"ready": True})
    while True:
        try:
            ready, _, _ = select.select([stdin, wake_r], [], [])
        except InterruptedError:
            continue
        if wake_r in ready:
            os.read(wake_r, 4096)
            _reap(proto)
        if stdin in ready:
            data = os.read(stdin, 65536)
            if not data:
                return 0
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                _spawn(json.loads(line), proto)
                _reap(proto)


if __name__ == "__main__":
    sys.exit(main())
