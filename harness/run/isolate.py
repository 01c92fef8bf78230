"""Run each (case, variant, backend) in its own process, with a timeout.

Why a process each:

- ``TRITON_INTERPRET`` is read when ``@triton.jit`` decorates a function, so GPU and
  interpreter runs cannot share a process;
- under the interpreter an unmasked access reads or writes raw host memory and can
  segfault (exit 139);
- on the GPU an illegal address poisons the CUDA context, and a spin on a lock hangs.

The process is a fork of a server that has imported torch and Triton once
(``harness.run.forkserver``, ``harness.run.zygote``), unless a wrapper (compute-sanitizer)
must start it: as isolated as a fresh process, without its seconds of start-up. On a GPU
the server never initialises CUDA; each fork makes its own context, as a fresh process
does. A crash or a timeout comes back as a result like any other, never as an exception.
``run_process`` is the one place the harness starts a worker; ``run_isolated`` runs
the case worker (``harness.run.worker``) and ``harness.commands.bench`` the bench
worker (``harness.run.bench_worker``) through it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

from harness.core.discovery import REPO_ROOT
from harness.core.events import RunResult, VariantEvents, WorkerError, read_worker_events
from harness.core.spec import CaseSpec
from harness.errors import UsageError
from harness.run import forkserver, parent, timings
from harness.run.backends import gpu_count
from harness.run.triton_compat import BENCH_TURNS_ENV

TAIL_BYTES = 6000
# Address-space limit for an interpreter worker, in GiB: a runaway allocation becomes a
# crash row instead of taking the machine's memory. CASEBOOK_WORKER_MEMORY_GB overrides
# it (0: no limit). GPU workers get none: CUDA reserves far more address space than it uses.
DEFAULT_MEMORY_GB = 8
MEMORY_ENV = "CASEBOOK_WORKER_RLIMIT_AS"
POLL = 0.2  # seconds between looks at a running worker
# Workers forked from the fork server (not under a wrapper such as compute-sanitizer, which must
# start the process itself); the bench worker, which times kernels, always starts fresh and alone.
FORKED = frozenset({"harness.run.worker", "harness.probe.worker", "harness.bugs.plain"})
HANG_FLOOR_S = 10.0  # under a probe's budget, a hang is still at least this long with nothing shown
STARTUP_GRACE = 60.0  # seconds a worker may take to import torch and Triton, to set up a call or to compile
KEEPER = os.path.abspath(parent.__file__)  # runs a fresh worker under a keeper (harness.run.parent)
KEEPER_GRACE = parent.CLEANUP_SECONDS + 5  # seconds a keeper has to end its worker before it is killed


class Workers:
    """Every worker process group this harness started and has not yet seen end.

    ``stop()`` (on SIGINT, SIGTERM or exit) ends them all at once and refuses new
    ones, so nothing outlives the command, a hanging kernel included. Each runs under a
    keeper (``harness.run.parent``) that ends it with everything it started.
    """

    def __init__(self):
        self._lock = threading.Lock()
        self._live: dict[int, subprocess.Popen] = {}
        self.stopping = threading.Event()

    def start(self, cmd, **kw) -> subprocess.Popen | None:
        with self._lock:
            if self.stopping.is_set():
                return None
            kept = parent.LINUX
            proc = subprocess.Popen([sys.executable, "-S", KEEPER, *cmd] if kept else cmd, start_new_session=True, **kw)
            proc.kept = kept
            self._live[proc.pid] = proc
            return proc

    def fork(self, module: str, args: str, log: str, env: dict):
        """A worker forked from the fork server (``harness.run.forkserver``), or None: not
        available, or the harness is stopping (then ``stopping`` is set)."""
        if self.stopping.is_set():
            return None
        child = forkserver.spawn(module, args, log, env, str(REPO_ROOT))
        if child is None:
            return None
        with self._lock:
            self._live[child.pid] = child
            stopping = self.stopping.is_set()
        if stopping:  # stop() ran while it was being forked
            _stop(child)
        return child

    def done(self, proc: subprocess.Popen) -> None:
        with self._lock:
            self._live.pop(proc.pid, None)

    def reopen(self) -> None:
        """Accept new workers again (the next command in the same process, as in tests)."""
        self.stopping.clear()

    def stop(self) -> int:
        """Ask every live worker's keeper to end it (their threads wait for them); return how many."""
        with self._lock:
            self.stopping.set()
            live = list(self._live.values())
        for proc in live:
            _stop(proc)
        forkserver.stop_all()
        return len(live)


WORKERS = Workers()


def _stop(proc) -> None:
    """Ask a worker's keeper to end it and everything it started (SIGTERM); without a keeper
    (not Linux), kill the worker's process group."""
    try:
        if getattr(proc, "kept", False):
            os.kill(proc.pid, signal.SIGTERM)
        else:
            os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def end(proc) -> int | None:
    """End a worker and wait for it: its keeper has KEEPER_GRACE seconds to clean up, then it, its
    process group and every process below it are killed. The exit status."""
    _stop(proc)
    try:
        return proc.wait(timeout=KEEPER_GRACE)
    except subprocess.TimeoutExpired:
        below = parent.descendants(proc.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        parent.kill_all(below)
        return proc.wait()


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
    silent: float = 0.0  # hung: seconds it showed nothing before it was ended
    interrupted: bool = False  # never started, or killed, because the harness is stopping
    stopped: float = 0.0  # ended by its caller's ``stop``: the seconds it had then been inside a call
    cut: str = ""  # ended at its caller's ``kill_at`` (a probe's budget's end): what it was doing then
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


def bytecode_cache() -> str | None:
    """Where workers should keep compiled bytecode, when torch's own ``__pycache__`` is missing
    and cannot be written (a read-only environment, such as a container image): without one,
    every worker compiles torch's Python sources again, seconds a process. None otherwise."""
    import importlib.util

    if os.environ.get("PYTHONPYCACHEPREFIX") or sys.pycache_prefix:
        return None
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    folder = os.path.dirname(spec.origin) if spec and spec.origin else None
    if folder is None or os.path.isdir(os.path.join(folder, "__pycache__")) or os.access(folder, os.W_OK):
        return None
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "triton-casebook",
                         "pycache")
    try:
        os.makedirs(cache, exist_ok=True)
    except OSError:
        return None
    return cache


_THREADS: int | None = None  # each worker's CPU threads while many run at once (side_by_side)
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@contextlib.contextmanager
def side_by_side(workers: int):
    """Up to ``workers`` workers run at once inside: each gets its share of the CPU cores as
    the size of its thread pools (torch's OpenMP, BLAS), so that a dozen workers do not start
    a dozen threads a core. A value the user set in the environment is kept."""
    global _THREADS
    before, _THREADS = _THREADS, max(1, (os.cpu_count() or 1) // max(1, workers))
    try:
        yield
    finally:
        _THREADS = before


# An interpreter worker's thread pools (torch's OpenMP, BLAS) at most, where the user set none: its
# numpy work is one thread, and each pool thread's stack, BLAS buffer and malloc arena take address
# space under its limit. On a 64-core host the workers raised MemoryError at 8 GiB (2026-11-26);
# 64 torch and BLAS threads take 3.3 GB of address space before any work, 4 take 1.2 GB
INTERPRETER_THREADS = 4


def worker_env(backend: str) -> dict:
    env = dict(os.environ)
    threads = _THREADS
    if backend == "interpreter":
        threads = min(threads or INTERPRETER_THREADS, INTERPRETER_THREADS, os.cpu_count() or 1)
    if threads is not None:
        for var in THREAD_VARS:
            env.setdefault(var, str(threads))
    if (cache := bytecode_cache()) is not None:
        env["PYTHONPYCACHEPREFIX"] = cache
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONFAULTHANDLER"] = "1"
    if backend == "interpreter":
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
        env.setdefault(BENCH_TURNS_ENV, "1")  # workers sharing the GPU benchmark their autotune configs in turns
    return env


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
                wrapper: list[str] | None = None, on_poll=None, until: float | None = None, stop=None,
                kill_at: float | None = None) -> Process:
    """``python -m module '<args as JSON>'`` in a new session; ``args["events"]`` is set to
    a file the worker appends JSON lines to. Ended, with everything it started, on timeout.
    ``on_poll(events_path)`` is called while it runs, about each POLL seconds (progress lines).
    ``until`` (a time.monotonic(), the end of a probe's budget) shortens the hang clock to then,
    but never below HANG_FLOOR_S after the last sign of progress, while the worker is inside a
    call of the user's launcher ("calling" without its "called": a kernel that does not return);
    a slow step between calls (inputs past 2**31 elements, a reference) keeps the whole timeout.
    ``stop(seconds)``, asked at each look while the worker has been inside such a call for
    ``seconds``, ends it when true (``Process.stopped``): the probe's other backend showed the
    kernel does not return. ``kill_at`` (a time.monotonic(), a probe's budget's end) ends it then,
    whatever it is doing, where the hang clock has not ended it before (``Process.cut``)."""
    res = Process()
    with tempfile.TemporaryDirectory(prefix="casebook-") as tmp:
        events, log = os.path.join(tmp, "events.jsonl"), os.path.join(tmp, "output.log")
        cmd = (wrapper or []) + [sys.executable, "-m", module, json.dumps({**args, "events": events})]
        env = worker_env(backend)
        env.update(extra_env or {})
        if (limit := memory_limit_bytes(backend)) is not None:
            env[MEMORY_ENV] = str(limit)  # the worker applies it to itself (harness.run.worker)
        with open(log, "wb") as out:
            proc, t0 = None, time.time()
            if module in FORKED and not wrapper and forkserver.enabled():
                proc = WORKERS.fork(module, cmd[-1], log, env)  # torch already imported: no seconds of start-up
            forked = proc is not None
            if proc is None:
                proc = WORKERS.start(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     cwd=str(REPO_ROOT), env=env)
            if proc is None:
                res.interrupted = True
                return res
            _wait(proc, timeout, res, events, WATCH.get(module, OTHER_WORKERS), on_poll, until, stop, kill_at=kill_at)
            if on_poll is not None:
                on_poll(events)  # what the worker wrote after the last look
        res.output_tail = _tail(log)
        res.events = _read_events(events)
        timings.record(module=module, args=args, backend=backend, forked=forked, wrapper=wrapper,
                       extra_env=extra_env, returncode=res.returncode, hung=res.hung, t0=t0, t1=time.time(),
                       events=res.events)
    return res


# The hang clock: the case's timeout runs while its kernels may run (from a launch, and again
# after each compilation); setting up (a variant's start, the work after each call) and
# compiling get STARTUP_GRACE instead: a loaded machine is slow at them, and they never hang.
# Other workers (the probe's, the bench's) restart the clock at each of their "start" events.
WATCH = {"harness.run.worker": ({b"launch", b"compiled"}, {b"start", b"trial", b"compiling"})}
OTHER_WORKERS = ({b"start", b"compiled"}, set())
CALLS = {b"calling", b"called"}  # the probe worker's marks around each call of the launcher (GPU)
COMPILES = {b"compiling", b"compiled"}  # and around each compilation inside it (it gets STARTUP_GRACE)


def new_lines(path: str, offset: int) -> tuple[list[bytes], int]:
    """The complete lines written to ``path`` since ``offset``, and the offset to read on from
    (a line still being written is read next time)."""
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            more = f.read()
    except OSError:
        return [], offset
    end = more.rfind(b"\n") + 1
    return more[:end].splitlines(), offset + end


def _progress(path: str, seen: int, kinds) -> tuple[list[bytes], int]:
    """The kinds of the events of ``kinds`` in the events file's new complete lines, in order, and
    the offset to read on from."""
    lines, seen = new_lines(path, seen)
    found = []
    for line in lines:
        m = re.search(rb'"event": "(\w+)"', line)
        if m and m.group(1) in kinds:
            found.append(m.group(1))
    return found, seen


def _in_call(kinds: list, state: tuple) -> tuple:
    """(inside a call of the launcher, compiling) after the probe worker's marks ``kinds``."""
    inside, compiling = state
    for k in kinds:
        if k in CALLS:
            inside, compiling = k == b"calling", False
        elif k in COMPILES:
            compiling = k == b"compiling"
    return inside, compiling


def _wait(proc: subprocess.Popen, timeout: float, res: Process, events: str, watch=OTHER_WORKERS,
          on_poll=None, until: float | None = None, stop=None, now=time.monotonic, kill_at: float | None = None) -> None:
    """Wait for the worker. A kernel that hangs is one that runs ``timeout`` seconds with
    nothing to show: the clock starts at each launch and again after each compilation;
    importing, setting up a call and compiling get at least STARTUP_GRACE (``watch``: the events
    that start the clock, and those that give the grace; ``WATCH``). ``until``, ``kill_at``: see
    run_process. ``now``: the clock (a test's own moves only as its process waits)."""
    clock, grace = watch
    state = (False, False)  # inside a call of the user's launcher (its kernels, their sync); compiling

    def tick(span: float) -> float:
        t = now()
        short = until is not None and state == (True, False)
        return min(t + span, max(t + HANG_FLOOR_S, until)) if short else t + span

    deadline, seen, last_sign = now() + max(timeout, STARTUP_GRACE), 0, now()
    began = last_sign  # when the call the worker is in began
    try:
        while True:
            try:
                ends = deadline if kill_at is None else min(deadline, kill_at)
                res.returncode = proc.wait(timeout=min(POLL, max(0.0, ends - now())))
                break
            except subprocess.TimeoutExpired:
                if on_poll is not None:
                    on_poll(events)
                kinds, seen = _progress(events, seen, clock | grace | CALLS | COMPILES)
                if kinds:
                    was, state = state, _in_call(kinds, state)
                    if state[0] and (not was[0] or b"calling" in kinds):
                        began = now()
                    span = timeout if kinds[-1] in clock | CALLS else max(timeout, STARTUP_GRACE)
                    deadline, last_sign = tick(span), now()
                if stop is not None and state[0] and stop(now() - began):
                    res.stopped = now() - began
                    end(proc)
                    break
                if not kinds and now() >= deadline:
                    res.silent = now() - last_sign
                    end(proc)
                    res.hung = True
                    break
                if kill_at is not None and now() >= kill_at:
                    res.cut = (f"inside a call of the launcher for {now() - began:.1f}s" if state == (True, False)
                               else "compiling a kernel" if state[1] else "outside a call of the launcher")
                    end(proc)
                    break
    finally:
        if proc.poll() is None:  # interrupted while waiting: take it down with us
            end(proc)
        WORKERS.done(proc)
    res.interrupted = WORKERS.stopping.is_set()


def _result(spec, variant, backend, trials, env, got: VariantEvents) -> RunResult:
    return RunResult(spec.slug, variant, backend, status="done", requested_trials=trials, env=env,
                     trials=got.trials, probes=got.probes, kernels=got.kernels)


def _ended(res: RunResult, proc: Process, error: WorkerError | None, timeout: float, expected: int) -> None:
    """The status of the variant the worker was running when it stopped (or that it never finished)."""
    res.returncode, res.output_tail = proc.returncode, proc.output_tail
    if proc.interrupted:
        res.status, res.message = "error", "interrupted: the harness was stopped"
    elif proc.hung:
        res.status, res.message = "hang", f"timed out after {timeout:.0f}s"
    elif error is not None:
        res.status = "crash" if error.phase == "launch" else "error"
        res.message = f"{error.type}: {error.message}".strip(": ")
        if error.traceback:
            res.output_tail = error.traceback + res.output_tail[-2000:]
    elif res.returncode:
        res.status, res.message = "crash", exit_message(res.returncode)
    else:  # trusted only with its "finished" event and every trial it was asked for
        res.status = "crash"
        res.message = (f"the worker exited (status 0) after {len(res.trials)} of {expected} results, "
                       f"without finishing")


def _not_run(spec, variant: str, backend: str, trials: int) -> RunResult | None:
    """The result of a run that cannot start here (skipped backend, missing GPUs), else None."""
    res = RunResult(spec.slug, variant, backend, status="skip", requested_trials=trials)
    if spec.expect[backend][0] == "skip":
        res.message = spec.skip_reason[backend]
        return res
    if backend == "gpu" and spec.gpus > 1 and (have := gpu_count()) < spec.gpus:
        res.unavailable, res.message = True, f"needs {spec.gpus} GPUs; this machine has {have}"
        return res
    return None


def run_variants(spec: CaseSpec, variants: list[str], backend: str, *, trials: int, seed: int,
                 timeout: float | None = None, save: dict | None = None, extra_env: dict | None = None,
                 wrapper: list[str] | None = None, overrides: dict | None = None) -> dict[str, RunResult]:
    """Run ``variants`` of one case on one backend, in as few processes as crashes allow.

    One worker runs them in order; when it dies, hangs or fails in one variant, that
    variant gets the crash (hang, error) and a fresh worker runs the ones left. Each
    variant's trials are all reported, or it is not "done". ``save``: {variant: folder}.
    """
    out = {v: r for v in variants if (r := _not_run(spec, v, backend, trials)) is not None}
    left = [v for v in variants if v not in out]
    timeout = timeout or spec.timeout[backend]
    expected = trials * ((overrides or {}).get("calls") or spec.calls)
    while left:
        args = {"path": str(spec.path), "variants": left, "backend": backend, "trials": trials, "seed": seed,
                "save": save, **(overrides or {})}
        proc = run_process("harness.run.worker", args, backend=backend, timeout=timeout, extra_env=extra_env,
                           wrapper=wrapper)
        got = read_worker_events(proc.events)
        error = got.error
        if error is not None and error.phase == "import":  # a broken environment: no kernel can run
            raise UsageError(error.message)
        for v in left:
            out[v] = _result(spec, v, backend, trials, got.env, got.of(v))
            if v in got.finished and len(out[v].trials) >= expected:
                out[v].returncode, out[v].output_tail = proc.returncode, proc.output_tail
                continue
            _ended(out[v], proc, error, timeout, expected)
            break
        left = [] if proc.interrupted else [v for v in left if v not in out]
    return {v: out[v] for v in variants}


def run_isolated(spec: CaseSpec, variant: str, backend: str, *, trials: int, seed: int,
                 timeout: float | None = None, save: str | None = None, extra_env: dict | None = None,
                 wrapper: list[str] | None = None, overrides: dict | None = None) -> RunResult:
    """Run one variant on one backend in a fresh process and collect what it reported.

    ``overrides`` goes to the worker as is: ``sizes``, ``calls`` or ``pad`` (guard padding).
    """
    return run_variants(spec, [variant], backend, trials=trials, seed=seed, timeout=timeout,
                        save={variant: save} if save else None, extra_env=extra_env, wrapper=wrapper,
                        overrides=overrides)[variant]
