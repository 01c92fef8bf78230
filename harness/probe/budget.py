"""The probe's time, owned by one object: ``Budget`` (the whole probe's start, end and stop, each
detector's wrap-up time, the share kept for the diagnosis, what a run at new sizes costs) and its
``Timer`` (the worker's one interval timer: one SIGALRM handler over a stack of deadlines, each
with the exception it raises). Every time constant of the probe is in the table below.

Both take their clock as a parameter (``SystemClock``: ``time.monotonic`` and SIGALRM), so that
the budget's rules are tested on a clock the test moves, in milliseconds whatever the machine's
load. The times are ``clock.now()`` values: the parent computes the probe's ``ends`` and ``stop``
and hands them to its workers (``time.monotonic`` is one clock for every process of the machine).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

# --- every time constant of the probe, in seconds ---------------------------------------------------------
# a detector's own limit (--timeout): past it the detector is stopped and its kernel taken for hung (P002)
TIMEOUT_S = 120.0
# the whole probe when --budget is not given (0: none). Issue #20's limits: 60 on the CPU alone, 20 with a
# GPU (measured on H100s: docs/probe-budget.md)
DEFAULT_BUDGET_S = {"gpu": 20.0, "interpreter": 60.0}
# before the workers' window closes (FINISH_S before the budget's end, below), the detectors stop starting runs
# (``Budget.ends``): a run started then has its time before the stop
MARGIN_S = 1.5
# before the workers' window closes, a detector still running is stopped where it is and keeps what it found
# (Detector.partial): the worker's exit takes the rest (``Budget.stop``); the report and lint take FINISH_S
STOP_BEFORE_S = 0.8
# a detector wraps up (``late()``) at this share of its timeout: the rest of it is for what it reports
WRAP_UP_SHARE = 0.6
# the diagnosis' experiments stop starting runs after this long (harness/probe/detectors/diagnose.py)
DIAGNOSIS_S = {"interpreter": 20.0, "gpu": 8.0}
# of the probe's budget, kept for the experiments where it is short (``Budget.diagnosis_reserve``)
RESERVE_SHARE = 0.5
# of the budget left when the experiments start, theirs where shape fuzzing left sizes for shapes-rest
# (it stopped at a first failure): the rest is for those sizes, where a second bug may show
SHARE_WITH_REST = 2 / 3
# of the budget left when it begins, what a detector that varies the inputs at the default sizes (layout,
# special, scalars, sentinel) may take: shape fuzzing and the diagnosis come after them in their processes, and a
# layout run that took the rest starved fuzzing on the H200 board (mamba-chunk-scan's P401, issue 37)
VARY_SHARE = 1 / 3
# of the budget left when it begins, what the run past 2**31 elements the probe decides on takes (the large
# detector, in a GPU process of its own beside the others; harness/probe/detectors/large.py): its pilot run
# says whether the whole run fits, else it is not made (a note says so); the rest is the report's
LARGE_SHARE = 0.85
# of the probe's budget, what the detectors before the large detector in the GPU's main process leave it where the
# launched kernels hold an int32 offset (the run past 2**31 elements it decides on: ``Budget.holding``). It runs
# last there (after shape fuzzing, which a run at the start starved); without a share kept, the detectors before
# it took the budget and the run was never made (the H200 board of 3f90368: "skipped: the probe's budget is
# spent"). A pilot and a run past 2**31 elements took 0.4 to 7 s on an H200 (docs/measurements/large-index-map.md)
LARGE_HOLD_S = {"gpu": 6.0}
# the most they leave it where the pilot, made as soon as the defaults' launch was seen, says how long the run will
# take (``large._holds``): the run's predicted seconds over LARGE_SHARE, and LARGE_HOLD_MARGIN_S more, up to this;
# a run predicted past it is not made, and nothing is held (the time goes to the other detectors). LARGE_HOLD_S is
# what is held where the pilot could not tell (it raised, or was stopped)
LARGE_HOLD_MAX_S = {"gpu": 10.0}
LARGE_HOLD_MARGIN_S = 1.0
# shapes-rest does not start with less of the probe's budget left
REST_MIN_LEFT_S = {"interpreter": 2.0, "gpu": 1.0}
# shape fuzzing's own time for its sizes, and for shrinking the failures it met
# (harness/probe/detectors/shapes.py)
FUZZ_S = {"interpreter": 15.0, "gpu": 6.0}
SHRINK_S = {"interpreter": 10.0, "gpu": 4.0}
# the order detector's run at a scaled-up size stops after this long (harness/probe/detectors/order.py)
SCALED_S = {"interpreter": 15.0}
# the values experiment runs a 4x larger size only after a run shorter than this
# (harness/probe/experiments/values.py)
VALUES_RUN_S = 2.0
# a worker process's own start (imports, CUDA; compute-sanitizer's own start under a GPU tool) beside
# its detectors' timeouts (harness/probe/runner.py)
PROCESS_START_S = {"plain": 30.0, "tool": 120.0}
# kept at the end of the budget for the report (``Budget.starting``): the workers' window closes this long
# before B, so that the merge, lint and the diagnosis's ranking after it (0.05 to 0.8 s, below; 1.2 s seen on
# the H200 board with five probes at once) end by B: --budget B is the command's whole time
FINISH_S = 1.5
# after the window's end the probe returns within this (the promise: --budget B ends by B, and in any case by
# B - FINISH_S + GRACE_S, counted from the command's start): the parent kills a worker still alive at the window's
# end (``Budget.kill_at``:
# one its own stop did not reach, in a compilation or a CUDA call that Python's signal handler waits out, or in
# its exit; the parent's wait for it ends there, and its keeper's kill takes milliseconds), then
# merges the findings, lints the launched kernels' files and ranks the diagnosis, and the command exits: 0.05 to
# 0.8 s from the last worker's end to the command's, measured on the shared 2-core CPU at load averages of 2.5
# to 9.5 (benchmarks/probe_overrun.py: docs/measurements/probe-overrun/); more than twice the worst
GRACE_S = 2.0
# the shortest interval the timer is armed for (setitimer takes 0 as "off")
TICK_S = 0.01
# (the parent's hang clock: harness/run/isolate.py's HANG_FLOOR_S and STARTUP_GRACE, used by every worker)


SPENT = "the probe's budget is spent"  # why a detector that keeps to the budget did not start
# why one did not start once a result was seen wrong and the time left is the diagnosis's (``Budget.reserved``)
RESERVED = ("the time left of the probe's budget is the diagnosis's: a result was seen wrong, and the experiments "
            "that take it apart come before looking for more")


class BudgetSpent(BaseException):
    """Raised at ``Budget.stop`` (the worker's timer): the probe's budget ends while a detector
    still runs. Not an Exception: the user's ``except Exception`` must not swallow it."""


class DetectorTimeout(BaseException):
    """Raised by the timer in a detector (or the file's loading) that ran past its time (not an
    Exception: the user's ``except Exception`` must not swallow it)."""


class Late(BaseException):
    """The detector's own deadline passed during a run it chose to make (not the kernel's hang):
    ``until_deadline`` ends that run quietly."""


class SystemClock:
    """The machine's clock: ``time.monotonic`` and the process's SIGALRM interval timer."""

    def now(self) -> float:
        return time.monotonic()

    def arm(self, seconds: float) -> None:
        """Deliver the alarm in ``seconds`` (0: never)."""
        signal.setitimer(signal.ITIMER_REAL, seconds)

    def on_alarm(self, handler):
        """Make ``handler`` the alarm's; returns the one before (to put back)."""
        return signal.signal(signal.SIGALRM, handler)


class ManualClock:
    """A clock that moves only when told: ``sleep`` (a slow launcher, a process waited for, in a
    test) moves it on and delivers the alarm once it is due, as SIGALRM would. The budget's rules run
    on it in milliseconds, whatever the machine's load."""

    def __init__(self, t: float = 1000.0):
        self.t, self.due, self.handler = t, None, None

    def now(self) -> float:
        return self.t

    def arm(self, seconds: float) -> None:
        self.due = self.t + seconds if seconds else None

    def on_alarm(self, handler):
        old, self.handler = self.handler, handler
        return old

    def sleep(self, seconds: float) -> None:
        self.t += seconds
        if self.due is not None and self.t >= self.due:
            self.due = None
            self.handler(None, None)


class Timer:
    """The one interval timer of a worker: a stack of (when, exception) deadlines under one
    handler, which raises the exception of the earliest one (on a tie, the one pushed last). Each
    ``limit`` block adds its deadline and takes it away at its end, and the timer is armed again
    for the earliest left, so an inner limit never loses an outer one."""

    def __init__(self, clock=None):
        self.clock = clock or SystemClock()
        self._stack: list = []
        self._old = None

    @contextlib.contextmanager
    def limit(self, when: float, exc: type):
        entry = (when, exc)
        if not self._stack:
            self._old = self.clock.on_alarm(self._fire)
        self._stack.append(entry)
        self._arm()
        try:
            yield
        finally:
            del self._stack[next(i for i, e in enumerate(self._stack) if e is entry)]
            if self._stack:
                self._arm()
            else:
                self.clock.arm(0)
                self.clock.on_alarm(self._old)

    def earliest(self) -> float | None:
        """The earliest deadline on the stack, or None."""
        return min((w for w, _ in self._stack), default=None)

    def _due(self):
        return min(reversed(self._stack), key=lambda e: e[0])

    def _arm(self) -> None:
        self.clock.arm(max(TICK_S, self._due()[0] - self.clock.now()))

    def _fire(self, signum=None, frame=None):
        if self._stack:  # (an alarm already on its way as the last limit ended: nothing to stop)
            raise self._due()[1]


class Budget:
    """The probe's time in one worker (or in the parent, which makes the first): ``ends`` (by which
    the detectors wrap up; None: no budget), ``stop`` (at which a detector still running is
    stopped), the running detector's ``deadline`` and the ``reserve`` it leaves the diagnosis, the
    longest autotune tuning seen (what a run at new sizes costs before its own work), and the timer."""

    def __init__(self, seconds: float = 0.0, *, ends: float | None = None, stop: float | None = None,
                 clock=None):
        self.clock = clock or SystemClock()
        self.seconds = seconds  # the whole probe's (--budget; 0: none)
        self.ends = ends
        self.stop = stop
        self.deadline: float | None = None  # clock.now() by which the running detector wraps up
        self.reserve = 0.0  # seconds before ``ends`` left to the diagnosis once a result was seen wrong
        self.longest_tuning = 0.0  # seconds of the longest tuning inside one call of the launcher here
        self.timer = Timer(self.clock)

    @classmethod
    def starting(cls, seconds: float, clock=None, since: float | None = None) -> "Budget":
        """The probe's budget from now, or from ``since`` (a clock.now() before it: the command's own
        start, ``process_started``): ``seconds`` long (0: none)."""
        clock = clock or SystemClock()
        t0 = clock.now() if since is None else min(since, clock.now())
        end = t0 + max(seconds - FINISH_S, 0.0)  # the workers' window: the report's time is kept after it
        return cls(seconds, ends=end - MARGIN_S if seconds else None,
                   stop=end - STOP_BEFORE_S if seconds else None, clock=clock)

    @staticmethod
    def default_seconds(backends) -> float:
        """--budget's default for the backends chosen."""
        return DEFAULT_BUDGET_S["gpu" if "gpu" in backends else "interpreter"]

    def now(self) -> float:
        return self.clock.now()

    def spent(self) -> bool:
        """Past ``ends``: a detector that keeps to the budget does not start, nor a worker process (it
        would have less than ``MARGIN_S`` for its start, its file's loading and its runs)."""
        return self.ends is not None and self.now() >= self.ends

    def reserved(self, wrong: bool) -> bool:
        """Wrong seen, and inside the diagnosis' reserve: no detector before it starts (docs/probe-budget.md)."""
        return self.ends is not None and wrong and self.reserve > 0 and self.now() >= self.ends - self.reserve

    def left(self) -> float | None:
        """Seconds to ``ends`` (None: no budget)."""
        return None if self.ends is None else self.ends - self.now()

    def begin(self, timeout: float, reserve: float = 0.0) -> None:
        """A detector starts: it wraps up at a share of its ``timeout`` or at ``ends``, and ``reserve``
        seconds before ``ends`` once a result was seen wrong."""
        self.deadline = self.now() + WRAP_UP_SHARE * timeout
        self.reserve = reserve
        if self.ends is not None:
            self.deadline = min(self.deadline, self.ends)

    def begin_share(self, share: float = VARY_SHARE) -> None:
        """The detector now running wraps up by ``share`` of what the budget has left (no budget: unchanged)."""
        if self.ends is not None:
            now = self.now()
            self.deadline = min(self.deadline if self.deadline is not None else float("inf"),
                                now + share * max(0.0, self.ends - now))

    def wrap_up_by(self, wrong: bool = False) -> float:
        """The clock.now() at which ``late()`` turns true as things stand (inf: never). Under a
        budget, a run is started only where it can end before the budget does (``run_cost``);
        ``wrong``: a result was seen wrong in this process, so the diagnosis' reserve counts."""
        t = self.deadline if self.deadline is not None else float("inf")
        if self.ends is not None and wrong:
            t = min(t, self.ends - self.reserve)
        if self.ends is not None:
            t = min(t, self.ends - self.run_cost())
        return t

    def late(self, wrong: bool = False) -> bool:
        return self.now() > self.wrap_up_by(wrong)

    def run_cost(self) -> float:
        """Seconds a run at new sizes may take before any of its own work: an autotuned kernel
        tunes again at each new key (on a GPU, compiling and benchmarking every config: 6-10 s for
        gemlite's GEMV, where a run itself takes milliseconds), as long as its longest tuning in
        this process. 0 where nothing was tuned: other runs are short beside the time the budget keeps."""
        return self.longest_tuning

    def tuned(self, seconds: float) -> None:
        """One call of the launcher spent ``seconds`` tuning (``execute.call``)."""
        self.longest_tuning = max(self.longest_tuning, seconds)

    @contextlib.contextmanager
    def holding(self, seconds: float):
        """A block in which the budget ends ``seconds`` earlier (``ends`` and ``stop``): the time a later detector of
        this process is kept (``LARGE_HOLD_S``); no budget, or nothing held: unchanged."""
        if not seconds or self.ends is None:
            yield
            return
        ends, stop = self.ends, self.stop
        self.ends, self.stop = ends - seconds, (None if stop is None else stop - seconds)
        try:
            yield
        finally:
            self.ends, self.stop = ends, stop

    def diagnosis_reserve(self, backend: str) -> float:
        """Seconds the detectors before the diagnosis in its process leave it at the end of the
        probe's budget once they have seen a wrong result: its own time, or a share of the probe's
        where that is short (20 s on a GPU)."""
        return min(DIAGNOSIS_S[backend], RESERVE_SHARE * self.seconds) if self.seconds else 0.0

    def begin_diagnosis(self, backend: str, rest_left: bool) -> None:
        """The diagnosis' deadline: its own time, and where shape fuzzing left sizes for shapes-rest
        (``rest_left``), a share of what the budget has left."""
        now = self.now()
        self.deadline = min(self.deadline or float("inf"), now + DIAGNOSIS_S[backend])
        if self.ends is not None and rest_left:
            self.deadline = min(self.deadline, now + SHARE_WITH_REST * max(0.0, self.ends - now))

    def kill_at(self) -> float | None:
        """When the parent kills a worker of budgeted detectors that is still alive (None: no budget):
        the budget's end. The worker's own stop (``stop``) came before it; one still running then is in
        code the alarm cannot interrupt (a compilation, a CUDA call, an import), or in its exit."""
        if self.ends is None:
            return None
        return (self.stop + STOP_BEFORE_S) if self.stop is not None else self.ends + MARGIN_S

    def hang_until(self) -> float | None:
        """When the parent takes a GPU process stuck in a call of the launcher for hung: where the
        worker stops a detector still running (``stop``), else at the budget's end (None: no budget)."""
        if self.ends is None:
            return None
        return self.stop or self.ends + MARGIN_S

    def limit(self, seconds: float, exc: type = DetectorTimeout):
        """A block stopped (``exc`` raised) after ``seconds``."""
        return self.timer.limit(self.now() + seconds, exc)

    @contextlib.contextmanager
    def until_deadline(self, seconds: float | None = None):
        """Stop the block at the detector's ``deadline`` or after ``seconds``, whichever comes first,
        quietly: a larger size re-tunes an autotuned kernel and runs it 8 times as long, which no
        estimate from the defaults' runs foresees. The detector's own limit (a hang, P002) and the
        budget's stop stay in charge where they come first. A deadline already past: no limit."""
        ends = [x for x in (self.deadline, None if seconds is None else self.now() + seconds) if x is not None]
        if not ends or min(ends) <= self.now():
            yield
            return
        try:
            with self.timer.limit(min(ends), Late):
                yield
        except Late:
            pass


def process_started() -> float | None:
    """The time.monotonic() at which this process started (None where the system does not say: not
    Linux), so that a command's budget counts its own start too: Python's, the harness's imports (0.3 to
    0.9 s measured on the 2-core CPU beside other work)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        return started_at(stat, os.sysconf("SC_CLK_TCK"), time.clock_gettime(time.CLOCK_BOOTTIME), time.monotonic())
    except (OSError, ValueError, AttributeError, IndexError):
        return None


def started_at(stat: bytes, ticks_per_s: int, boot_now: float, now: float) -> float | None:
    """``process_started`` from /proc/self/stat's text (its 22nd field: the start, in clock ticks since
    the boot), the clock's ticks per second, the seconds since the boot now (CLOCK_BOOTTIME, the clock
    of that field) and time.monotonic() now. None for a start not before now."""
    fields = stat.rsplit(b")", 1)[1].split()  # (the process's name, in parentheses, may hold spaces)
    age = boot_now - int(fields[19]) / ticks_per_s  # field 22 is the 20th after the name
    return now - age if age >= 0 else None
