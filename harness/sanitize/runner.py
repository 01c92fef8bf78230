"""``python -m harness sanitize``'s parent side: the user's command in a process of its own
(``harness.sanitize.child``, a new process group that Ctrl-C or SIGTERM takes down with the
command), its hits read back, the findings printed.

The child's hits are written as they are made, so a command that dies (a signal, an exit from
a kernel's process) still has what it found reported. Exit status: 1 where an error finding was
made, else the command's own (128 + N for a command killed by signal N).
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.errors import UsageError
from harness.run.isolate import WORKERS, end
from harness.sanitize import JOB_ENV, RESULTS_ENV
from harness.sanitize.session import Config, read_sink

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Job:
    kind: str  # "script", "module", "pytest"
    target: str = ""
    args: list = field(default_factory=list)
    config: Config = field(default_factory=Config)
    mode: str = "fail"  # pytest: a finding fails its test, or "report"


@dataclass
class Outcome:
    returncode: int  # the command's own exit status
    findings: list
    launches: int | None
    signal: str = ""


def parse_command(words: list[str], module: list[str] | None) -> Job:
    """``pytest ARGS``, ``SCRIPT.py ARGS`` or (``module``) ``MODULE ARGS``; bad input is a UsageError."""
    if module is not None:
        if not module:
            raise UsageError("sanitize: -m needs a module name")
        return Job("module", module[0], list(module[1:]))
    if not words:
        raise UsageError("sanitize: name what to run: pytest ARGS..., SCRIPT.py ARGS... or -m MODULE ARGS...")
    head, rest = words[0], list(words[1:])
    if head in ("pytest", "py.test"):
        return Job("pytest", "pytest", rest)
    if not os.path.isfile(head):
        raise UsageError(f"sanitize: no such script: {head}")
    return Job("script", head, rest)


def _environment(job: Job, results: str, backend: str) -> dict:
    env = dict(os.environ)
    env[RESULTS_ENV] = results
    env[JOB_ENV] = json.dumps({**asdict(job), "config": asdict(job.config), "backend": backend})
    env["TRITON_INTERPRET"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                                            if p])
    return env


def run(job: Job, *, quiet_stdout: bool = False, backend: str = "interpreter") -> Outcome:
    """Run the job's command under the sanitizer; its output goes to this terminal (to stderr
    where ``quiet_stdout``: stdout is then the caller's, for JSON). ``backend`` gpu: on the GPU
    under compute-sanitizer (``harness.sanitize.gpu``). Interrupted, the exception carries the
    findings made so far (``sanitize_outcome``) on its way up."""
    from harness.sanitize import findings as F

    stdout = sys.stderr if quiet_stdout else None
    with tempfile.TemporaryDirectory(prefix="casebook-sanitize-") as tmp:
        if backend == "gpu":
            from harness.sanitize import gpu

            code, hits, launches = gpu.run(job, tmp, functools.partial(_start, stdout=stdout), _say,
                                           functools.partial(Pass, stdout=stdout))
        else:
            results = os.path.join(tmp, "hits.jsonl")
            with open(results, "x", encoding="utf-8"):  # made here, and kept open: a command that removes it (or
                pass                                     # the whole temporary folder) does not take the findings along
            with open(results, "rb") as kept:
                try:
                    code = _start(job, results, backend, {}, [], stdout=stdout)
                except BaseException as e:  # Ctrl-C, SIGTERM: the findings so far go with the interruption
                    found = read_sink(results)[0] if os.path.exists(results) else []
                    e.sanitize_outcome = Outcome(130, F.collect(found), None, "")
                    raise
                if not os.path.exists(results):  # the same file, read back through the handle
                    os.makedirs(tmp, exist_ok=True)
                    Path(results).write_bytes(kept.read())
            hits, launches = read_sink(results)
    died = ""
    if code < 0:
        died = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        code = 128 - code
    return Outcome(code, F.collect(hits), launches, died)  # the command's own status: the caller weighs the findings


def _start(job: Job, results: str, backend: str, extra: dict, prefix: list, stdout=None) -> int:
    """The command's child for one pass (``backend`` gpu: under the ``prefix`` compute-sanitizer
    command line, with the GPU's variables and ``extra``); its exit status."""
    return _wait(_launch(job, results, backend, extra, prefix, stdout=stdout))


def _launch(job: Job, results: str, backend: str, extra: dict, prefix: list, **kw):
    """``_start``'s child, started (``kw``: Popen's streams); None where the harness is stopping."""
    env = _environment(job, results, backend)
    if backend == "gpu":
        from harness.sanitize import gpu

        env = gpu.environment(env)
    env.update(extra)
    return WORKERS.start(list(prefix) + [sys.executable, "-m", "harness.sanitize.child"], env=env, **kw)


class Pass:
    """A pass's child, started without waiting for it (``harness.sanitize.gpu``: the interpreter's pass
    beside the GPU's, a GPU process started ahead as a spare). ``held``: its output read into memory
    until ``release`` (then it goes where ``_start``'s would have gone, as it comes): two passes' lines
    never interleave. ``finish`` waits for it (released first) and returns its exit status; ``stop``
    ends it, its output left unsaid."""

    def __init__(self, job: Job, results: str, backend: str, extra: dict, prefix: list, stdout=None,
                 held: bool = False):
        streams = (stdout or sys.stdout, sys.stderr)
        kw = dict(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE) if held else \
            dict(stdout=stdout)
        self.proc = _launch(job, results, backend, extra, prefix, **kw)
        self.pumps = [_Pump(pipe, stream) for pipe, stream in zip((self.proc.stdout, self.proc.stderr), streams)] \
            if held and self.proc is not None else []

    def release(self) -> None:
        for pump in self.pumps:
            pump.release()

    def finish(self) -> int:
        self.release()
        try:
            return _wait(self.proc)
        finally:
            for pump in self.pumps:
                pump.join()

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                end(self.proc)
            WORKERS.done(self.proc)
        for pump in self.pumps:
            pump.join(said=False)


class _Pump:
    """A child's pipe read as it comes (the child never blocks on a full pipe), kept until ``release``,
    then written to ``stream``."""

    def __init__(self, pipe, stream):
        import codecs
        import threading

        self.pipe, self.stream, self.kept, self.live = pipe, stream, [], False
        self.decode = codecs.getincrementaldecoder("utf-8")(errors="replace").decode
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, daemon=True, name="sanitize-pass-output")
        self.thread.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.pipe.fileno(), 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                return
            with self.lock:
                if self.live:
                    self._say(self.decode(chunk))
                else:
                    self.kept.append(chunk)

    def _say(self, text: str) -> None:
        if text:
            self.stream.write(text)
            self.stream.flush()

    def release(self) -> None:
        with self.lock:
            if not self.live:
                self.live = True
                self._say(self.decode(b"".join(self.kept)))
                self.kept = []

    def join(self, said: bool = True) -> None:
        """The rest of the output (a process the child left behind holding the pipe: not waited for)."""
        self.thread.join(timeout=5)
        with self.lock:
            self.live = self.live and said
            self._say(self.decode(b"", final=True) if said else "")
        if not self.thread.is_alive():
            self.pipe.close()


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _wait(proc) -> int:
    """The child's exit status; its process group killed if this process is interrupted."""
    if proc is None:
        raise KeyboardInterrupt  # the harness is stopping
    try:
        return proc.wait()
    finally:
        if proc.poll() is None:
            end(proc)  # with everything it started
        WORKERS.done(proc)
