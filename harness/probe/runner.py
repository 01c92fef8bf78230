"""Running the probe's detectors, each in its own process (``harness.probe.worker``).

A crash (a segfault in the interpreter, an illegal address on the GPU) or a hang of the
user's kernel ends that one process: it becomes a finding (P001, P002) naming the
detector and, for shape fuzzing, the sizes it was trying, and the other detectors
still run (on the GPU an illegal address is an exception, a P001 finding, and the
worker ends after that detector, as its CUDA context is broken; after a GPU hang the
rest of that process's detectors are not run, each would hang as long). The GPU tools
run the reference detector: compute-sanitizer memcheck at the small sizes
(``target.Target.small_sizes``; its log file, guard padding off, ``PYTORCH_NO_CUDA_MEMORY_CACHING=1``),
racecheck the same way at the smallest (``Target.smallest_sizes``), Triton's sanitizers
(``TRITON_INSTRUMENTATION_MODE``) at the small sizes, and ``TRITON_DEBUG=1`` at the
full sizes (its int32 overflow checks need them). A
case folder that needs more GPUs than the machine has is one note (not run), not a failure.
A file that cannot be loaded (missing, raises at import, lacks the launcher,
make_inputs or reference) is a ``ProbeInputError`` with a one-line message.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import Enum

from harness.probe.blackboard import Blackboard, Meta
from harness.probe.budget import PROCESS_START_S, SPENT, TIMEOUT_S, Budget
from harness.probe.findings import ERROR, INFO, WARNING, Finding, attach_cases, problems
from harness.probe.request import ProbeRequest
from harness.run.backends import resolve_backends
from harness.run.isolate import exit_message, new_lines, run_process

from harness.probe import detectors as registry

class ProbeInputError(Exception):
    """The probe file cannot be used; the message is one line."""


@dataclass
class ProbeReport:
    """Everything one probe found; ``ok`` when nothing but information."""

    file: str
    findings: list = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    seconds: float = 0.0
    ran: list = field(default_factory=list)  # (backend, detector, seconds, status)

    diagnosis: list = field(default_factory=list)  # harness.probe.diagnosis.diagnose: best first
    lint: list = field(default_factory=list)  # harness.lint's findings in the probed file and the launched
    # kernels' modules (the source alone), each path as the user gave it
    budget: float = 0.0  # seconds the whole probe had (--budget; 0: none)

    @property
    def problems(self) -> list:
        """Errors and warnings."""
        return problems(self.findings)

    @property
    def errors(self) -> list:
        return [f for f in self.findings if f.severity == ERROR]

    @property
    def warnings(self) -> list:
        return [f for f in self.findings if f.severity == WARNING]

    @property
    def ok(self) -> bool:
        """Checked, and no error: nothing shown wrong on any backend and size (warnings may remain).
        A probe that checked nothing (``checked`` is False) is not ok, whatever it found."""
        return not self.errors and self.checked

    @property
    def checked(self) -> bool:
        """Whether some detector produced a result about the kernel: an error found, or a detector
        that ran to its end or met a hang. One that failed, was not run, skipped, stopped (at the
        budget's end too: its answer unfinished) or killed (its process ended under it with no error
        about the kernel) gave none; nor did shape fuzzing that compared no size (the reference raised
        at every one)."""
        if self.errors:
            return True
        for backend, detector, _, status in self.ran:
            if status not in ("done", "hang"):
                continue
            fuzz = ((self.meta.get(backend) or {}).get("seen") or {}).get("fuzz") or {}
            if detector in ("shapes", "shapes-rest") and fuzz.get("compared") == 0:
                continue
            return True
        return False

    def short_of_time(self) -> bool:
        """Whether the probe's budget ended before some detector's answer: one cut at its end, or
        skipped or not run as it was spent (each has its note)."""
        return any(st == CUT or st.endswith(SPENT) for _, _, _, st in self.ran) or \
            any(f.code == "P000" and "--budget" in f.message for f in self.findings)

    def by_code(self, code: str) -> list:
        return [f for f in self.findings if f.code == code]

    def text(self) -> str:
        from harness.probe.findings import case_links, shown_path, shown_paths, table

        from harness.probe.diagnosis import text as diagnosis_text

        lines = [f"probe {shown_path(os.path.abspath(self.file))}: {len(self.errors)} errors, {len(self.warnings)} warnings, "
                 f"{len(self.findings) - len(self.problems)} notes ({self.seconds:.0f}s)"]
        lines += self.cut_short()
        if not self.checked:
            lines.append("nothing was checked: no detector produced a result about the kernel (see the P000 and "
                         "P001 lines below), so ok is False")
        if self.diagnosis:
            lines += [shown_paths(x) for x in diagnosis_text(self.diagnosis)] + [""]
        lines.append(table(self.findings))
        if links := case_links(self.findings):
            lines += ["", "casebook cases with the same defect:"] + [f"  {x}" for x in links]
        if self.lint:
            lines += ["", "the source alone (harness lint):"]
            lines += [f"  {x['path']}:{x['line']}:{x['col']}: {x['code']} {x['message']} "
                      f"[cases/{x['cases'][0]}]"
                      for x in self.lint]
        return "\n".join(lines)

    def cut_short(self) -> list:
        """A line for each backend whose shape fuzzing ran out of time before its last size."""
        out = []
        for backend in self.meta:
            f = _seen(self, backend).fuzz
            if f and f.get("tried", 0) < f.get("planned", 0):
                more = f" (--budget {max(60, 3 * self.budget):.0f} tries more)" if self.budget else ""
                out.append(f"shape fuzzing on the {backend} tried {f['tried']} of {f['planned']} sizes in its "
                           f"time{more}")
        return out

    def to_json(self) -> dict:
        return {"file": self.file, "ok": self.ok, "errors": len(self.errors), "warnings": len(self.warnings),
                "diagnosis": self.diagnosis, "seconds": round(self.seconds, 2), "budget": self.budget, "meta": self.meta,
                "ran": [{"backend": b, "detector": d, "seconds": round(s, 2), "status": st} for b, d, s, st in self.ran],
                "findings": [f.to_json() for f in self.findings], "lint": self.lint}


class BackendUnavailable(Exception):
    """The file cannot run on this backend here (a case that needs more GPUs): a note, not a failure."""


@dataclass
class ProbeEvents:
    """A probe worker's events sorted out (``_events`` is their one reader): per detector its
    findings, and how far the process got."""

    findings: dict = field(default_factory=dict)  # detector -> [Finding]
    meta: dict = field(default_factory=dict)  # what the file declares, and what the runs saw (cumulative)
    started: list = field(default_factory=list)  # detectors, in order
    ended: list = field(default_factory=list)
    errors: dict = field(default_factory=dict)  # detector ("" for the process) -> its own failure
    load: str | None = None  # the file could not be loaded: why
    unavailable: str | None = None  # the file cannot run on this backend here: why
    load_cut: str | None = None  # the probe's budget ended while the file was loaded: what was being done
    trying: dict | None = None  # the sizes being run when the process stopped (shape fuzzing)
    skipped: dict = field(default_factory=dict)  # detector -> why it did not apply
    clock: dict = field(default_factory=dict)  # detector -> [its start, its end] (the events' time.time())
    cut: set = field(default_factory=set)  # detectors stopped at the budget's end (budget.BudgetSpent)


class Status(str, Enum):
    """How a detector's run ended, as the report says it (``DetectorRun.label``)."""

    DONE = "done"
    SKIPPED = "skipped"  # it did not apply (``DetectorRun.why``)
    CUT = "cut at the budget's end"  # stopped there, its findings so far kept (its answer unfinished)
    ERROR = "error"  # the detector's own failure
    NOT_RUN = "not run"
    CRASH = "crash"  # its process died in it
    HANG = "hang"  # its process was killed, the kernel hung
    STOPPED = "stopped"  # its interpreter call was stopped, as the kernel did not return on the GPU


CUT = Status.CUT.value  # the status of a detector stopped at the budget's end


@dataclass
class DetectorRun:
    """One detector's run on one backend, as the runner accounts for it."""

    findings: list
    status: Status
    seconds: float = 0.0
    why: str = ""  # why it was skipped

    @property
    def label(self) -> str:
        """The status as the report says it: "skipped: <why>" for a skip."""
        return f"skipped: {self.why}" if self.status is Status.SKIPPED else self.status.value


def _events(proc) -> ProbeEvents:
    out = ProbeEvents()
    for e in proc.events:
        kind = e.get("event")
        if kind == "start":
            out.started.append(e["detector"])
            out.trying = None
            out.clock[e["detector"]] = [e.get("t"), None]
        elif kind == "end":
            out.ended.append(e["detector"])
            out.clock.setdefault(e["detector"], [None, None])[1] = e.get("t")
        elif kind == "skipped":
            out.skipped[e["detector"]] = e.get("reason", "")
        elif kind == "cut":
            out.cut.add(e["detector"])
        elif kind == "finding":
            out.findings.setdefault(e.get("detector", ""), []).append(Finding.from_json(e))
        elif kind == "meta":  # a worker's "seen" is cumulative: its last one holds the others
            out.meta.update(Meta.from_json(e).to_json())
        elif kind == "trying":
            out.trying = e.get("sizes")
        elif kind == "error" and e.get("phase") == "load":
            out.load = e["message"]
        elif kind == "error" and e.get("phase") == "unavailable":
            out.unavailable = e["message"]
        elif kind == "error" and e.get("phase") == "budget":
            out.load_cut = e["message"]
        elif kind == "error":
            out.errors[e.get("detector", "")] = e["message"]
    return out


def _seconds(ev: ProbeEvents, name: str, dt: float) -> float:
    """The detector's own seconds, from its start and end events (up to now where it did not end);
    ``dt`` (the process's, shared out) for a GPU tool, whose process start is its cost."""
    t0, t1 = ev.clock.get(name, [None, None])
    if _tool(name) is not None or t0 is None:
        return dt
    return max(0.0, (t1 if t1 is not None else time.time()) - t0)


def _budgeted(name: str, options: dict) -> bool:
    """Whether the detector keeps to the probe's --budget with these options (``--large`` asked for does not)."""
    d = registry.registry().get(name)
    return d is None or d.keeps_budget(options)


def _tool(name: str):
    """The tool a detector is (on a GPU: compute-sanitizer, TRITON_DEBUG; on the interpreter: triton-viz), or None."""
    d = registry.registry().get(name)
    return d.tool if d is not None else None


def _worker_request(req: ProbeRequest, todo: list, backend: str, timeout: float) -> tuple[ProbeRequest, dict | None]:
    """The worker's request for the detectors ``todo``, and how to run it: a GPU tool runs the
    reference detector alone under the tool, at the small sizes where it asks for them (None: the
    tool is not here; a str: why it does not apply here, as a detector's skip)."""
    import itertools

    worker = req.with_(detectors=list(itertools.takewhile(lambda d: _tool(d) is None, todo)), backend=backend,
                       timeout=timeout)
    tool = _tool(todo[0])
    if tool is None:
        return worker, {}
    how = tool.how(worker.options)
    if how is None or isinstance(how, str):  # not here, or why it does not apply here (a skip)
        return worker, how
    # padding is valid memory: it would hide accesses from compute-sanitizer
    options = {**worker.options, "pad": 0, "small": how.get("small") or False}
    worker = worker.with_(detectors=["reference"], options=options)
    return worker, {k: v for k, v in how.items() if k != "small"}


def _run_worker(worker: ProbeRequest, backend: str, timeout: float, extra: dict, say=None, hung=None):
    """One worker process (the detectors each stop themselves after ``timeout``; the process
    limit, counted again from each detector's start, is the backstop for a hang they cannot
    stop: a GPU kernel that never returns). A tool's log file is read into the output. ``hung``
    (a threading.Event) is set once the GPU's side of the probe hung: an interpreter process then
    inside a call for HANG_FLOOR_S or more is stopped (``_stop_when``)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="casebook-probe-") as tmp:
        log = os.path.join(tmp, "tool.log")
        if extra.get("log_file"):
            extra = {**extra, "wrapper": extra["wrapper"] + ["--log-file", log]}
        extra.pop("log_file", None)
        margin = PROCESS_START_S["tool" if extra.get("wrapper") else "plain"]
        proc = run_process("harness.probe.worker", worker.to_json(), backend=backend, timeout=timeout + margin,
                           on_poll=_progress(backend, say) if say else None,
                           until=None if extra else _hang_until(worker), stop=_stop_when(backend, hung),
                           kill_at=None if extra else _kill_at(worker), **extra)
        if os.path.exists(log):
            with open(log, errors="replace") as f:
                text = f.read()
            head = text[:4000] + ("\n[...]\n" + text[-2000:] if len(text) > 6000 else text[4000:])
            proc.output_tail = head + "\n" + proc.output_tail
    return proc


def _hang_until(worker: ProbeRequest) -> float | None:
    """When a GPU process stuck in a call of the launcher is taken for hung: at the end of the
    probe's budget, less the time its report takes (``stop``, where the worker stops a detector
    still running; at least HANG_FLOOR_S after the call began), where all its detectors keep to
    the budget; else after the whole timeout (as under a GPU tool, whose runs are slow). Each
    detector wraps itself up by then: a call still running has a kernel that does not return (a
    spin lock), and waiting the timeout out (150 s by default) would spend the budget many times over."""
    if worker.backend != "gpu" or not all(_budgeted(d, worker.options) for d in worker.detectors):
        return None
    return worker.budget().hang_until()


def _kill_at(worker: ProbeRequest) -> float | None:
    """When the parent ends a worker still alive (``Budget.kill_at``: the budget's end), on either backend,
    where all its detectors keep to the budget (None: --budget 0, --large). Its own alarm stops a detector
    at ``stop``, but not in code that does not return to Python: a compilation (Triton's passes, LLVM), a
    CUDA call, an import, a C extension's loop."""
    if not all(_budgeted(d, worker.options) for d in worker.detectors):
        return None
    return worker.budget().kill_at()


def _stop_when(backend: str, hung):
    """The interpreter's ``stop`` for run_process, where the GPU's side runs beside it: a call of the
    launcher still running HANG_FLOOR_S after it began, once the GPU's side hung (``hung`` set). The
    interpreter runs a grid's programs one after another, so a spin lock that never returns on the
    GPU spins there too, until the interpreter's own timeout (30 to 120 s), past any budget."""
    if backend != "interpreter" or hung is None:
        return None
    from harness.run.isolate import HANG_FLOOR_S

    return lambda seconds: hung.is_set() and seconds >= HANG_FLOOR_S


class Batch:
    """The detectors of one batch, run in as few processes as it takes: a crash or a hang ends one
    detector, and the ones after it run in a new process. ``run()`` returns {name: DetectorRun} and
    the meta; ``todo`` holds the detectors not yet accounted for, ``results`` those that are."""

    def __init__(self, req: ProbeRequest, names: list, backend: str, timeout: float, say, hung=None):
        self.req, self.backend, self.timeout, self.say, self.hung = req, backend, timeout, say, hung
        self.todo: list = list(names)
        self.results: dict = {}
        self.meta: dict = {}

    def _not_run(self, name: str, why: str, severity: str = INFO, status: Status = Status.NOT_RUN) -> None:
        self.results[name] = DetectorRun([Finding("P000", name, self.backend, why, severity=severity)], status)

    def _spent(self, how: str) -> None:
        """Each detector left that keeps to the budget: not run, as the probe's budget ``how`` (a note)."""
        budget = self.req.options.get("budget", 0)
        for name in [n for n in self.todo if _budgeted(n, self.req.options)]:
            self._not_run(name, f"not run: the probe's --budget ({budget:g}s) {how}; a larger --budget gives it the "
                                f"time")
        self.todo = [n for n in self.todo if not _budgeted(n, self.req.options)]

    def run(self) -> tuple[dict, dict]:
        req, backend, timeout = self.req, self.backend, self.timeout
        while self.todo:
            t0 = time.monotonic()
            if req.budget().spent():
                # no process starts for the rest past the budget's end (one ended early, a crash; or this batch
                # waited for a --jobs slot): its start and its file's loading would carry the probe past it
                self._spent("was spent before its process started")
                if not self.todo:
                    break
            worker, extra = _worker_request(req, self.todo, backend, timeout)
            if extra is None:
                name = self.todo.pop(0)
                self._not_run(name, _tool(name).missing or f"{name} not found (put it on PATH or set CUDA_HOME)")
                continue
            if isinstance(extra, str):  # the tool does not apply here (a sanitizer this Triton lacks)
                self.results[self.todo.pop(0)] = DetectorRun([], Status.SKIPPED, why=extra)
                continue
            proc = _run_worker(worker, backend, timeout, extra, self.say, self.hung)
            ev = _events(proc)
            if ev.load:
                raise ProbeInputError(ev.load)
            if proc.hung and not ev.meta and not ev.started:  # stuck where the worker's own alarm cannot reach
                raise ProbeInputError(f"{req.file}: not loaded after {timeout:.0f}s (importing it, or its "
                                      f"make_inputs, hung)")
            if ev.unavailable:
                raise BackendUnavailable(ev.unavailable)
            if ev.load_cut:  # not the file's fault: the budget ended first
                _merge_meta(self.meta, ev.meta)
                self._spent(f"ended while its process was {ev.load_cut}")
                continue
            _merge_meta(self.meta, ev.meta)
            self.collect(ev, proc, (time.monotonic() - t0) / max(1, len(ev.started)))
            left = len(worker.detectors) - len(ev.ended)
            if not left:  # all it was asked ran (an exit status after that is compute-sanitizer's --error-exitcode)
                continue
            if proc.cut and not ev.started[len(ev.ended):]:  # ended at the budget's end outside any detector
                self._spent("was spent" if ev.started else "ended while its process was starting or loading the "
                            "file (importing it, make_inputs at its sizes)")
                continue
            if not proc.hung and not ev.started[len(ev.ended):] and (ev.ended or not proc.returncode):
                if proc.returncode:
                    continue  # ended between two detectors (a broken CUDA context): the rest in a new process
                for _ in range(left):  # the process ended cleanly before starting them: report, do not loop
                    # the probe's own failure, nothing shown about the kernel: a warning (--strict fails on it)
                    self._not_run(self.todo.pop(0), "the worker stopped before this detector (the probe's own "
                                  "failure: nothing was shown about the kernel)", WARNING, Status.ERROR)
                continue
            died = self.todo[0]
            self.died(ev, proc, time.monotonic() - t0)
            if proc.hung and backend == "gpu" and self.hung is not None:
                self.hung.set()  # the interpreter's side beside it need not wait its whole timeout (_stop_when)
            run = self.results[died]
            if run.status is Status.CRASH and req.failing is None and any(f.severity == ERROR for f in run.findings):
                req = self.req = req.with_(failing=dict(ev.trying or {}))  # the diagnosis starts where it died
        return self.results, self.meta

    def died(self, ev: ProbeEvents, proc, dt: float) -> None:
        """The detector the process died or hung in; after a hang the rest are not run (a kernel that
        never returns makes each of them wait as long)."""
        name = self.todo.pop(0)
        own = _tool_findings(name, self.backend, proc)  # a tool's report of what it saw before the process ended
        partial = _kept(name, ev.findings.get("reference" if _tool(name) else name, []), own) + own
        dt = _seconds(ev, name, dt)
        status = Status.HANG if proc.hung else Status.STOPPED if proc.stopped else Status.CUT if proc.cut else \
            Status.CRASH
        self.results[name] = DetectorRun(partial + [_ended(name, self.backend, proc, ev, self.timeout,
                                                           self.req.options.get("budget", 0))], status, dt)
        self.say(f"{self.backend} {name}: {status.value} after {dt:.1f}s")
        if proc.cut:  # killed at the budget's end: the rest have no time
            self._spent("was spent")
            return
        if proc.hung or proc.stopped:  # the next detector's first call would hang the same way, and wait as long
            why = f"the kernel hung in the {name} detector" if proc.hung else "the kernel did not return on the GPU"
            while self.todo:
                self._not_run(self.todo.pop(0), f"not run: {why}")

    def collect(self, ev: ProbeEvents, proc, dt: float) -> None:
        """The detectors that ended: their findings (a GPU tool's own, read from its output)."""
        backend = self.backend
        for name in ev.ended:
            label = self.todo.pop(0)  # as the user knows it: a GPU tool runs the reference detector
            own = _tool_findings(label, backend, proc)
            found = _kept(label, ev.findings.get(name, []), own) + own
            for f in found:
                f.detector = label
            if name in ev.errors:
                # the probe's own failure: nothing shown about the kernel (a warning: --strict fails on it)
                found.append(Finding("P000", label, backend, f"the detector failed: {ev.errors[name]}"[:300],
                                     severity=WARNING))
            if name in ev.errors:
                run = DetectorRun(found, Status.ERROR)
            elif name in ev.skipped:
                run = DetectorRun(found, Status.SKIPPED, why=ev.skipped[name])
            else:
                run = DetectorRun(found, Status.CUT if name in ev.cut else Status.DONE)
            if run.status is not Status.SKIPPED:
                run.seconds = _seconds(ev, label, dt)
            self.results[label] = run


def _kept(label: str, found: list, own: list | None = None) -> list:
    """A tool's run of the reference detector keeps only a crash, a kernel that did not compile (under the tool:
    triton-viz rewrites it) or a hang, and only when the tool itself reported nothing (the reference detector
    reports the rest already)."""
    if _tool(label) is None:
        return found
    return [] if own else [f for f in found if f.code in ("P001", "P002", "P003", "P403")]


def _ended(name: str, backend: str, proc, ev: ProbeEvents, timeout: float, budget: float = 0.0) -> Finding:
    """The finding for a detector whose process died or hung in it, or was ended at the budget's end."""
    at = f" at sizes {', '.join(f'{k}={v}' for k, v in ev.trying.items())}" if ev.trying else ""
    if proc.cut:  # not shown here either: the budget ended first
        return Finding("P000", name, backend, f"stopped at the end of the probe's budget{at} (--budget {budget:g}s): "
                                              f"its process, {proc.cut}, did not stop itself and was ended; "
                                              f"nothing of it was kept; a larger --budget gives it the time",
                       severity=INFO)
    if proc.stopped:  # not shown here: a call cut short tells nothing of its own
        return Finding("P002", name, backend, f"stopped after {proc.stopped:.0f}s inside a call of the launcher{at}, "
                                              f"as the kernel did not return on the GPU (its P002); --budget 0 waits "
                                              f"the whole timeout here", severity=INFO)
    if proc.hung:
        d = registry.registry().get(name)
        if 0 < proc.silent < timeout:  # killed at the budget's end: a long call, not shown to hang
            # (information for a detector whose own runs are long by design: large's past 2**31 elements)
            own = d is not None and d.timeout_severity == INFO
            return Finding("P002", name, backend, f"no result after {proc.silent:.0f}s{at}: killed at the end of the "
                                                  f"probe's budget; a call this long is a hang or a slow kernel on "
                                                  f"a busy device (a {'note' if own else 'warning'}: --budget 0 waits "
                                                  f"{timeout:.0f}s to tell)", severity=INFO if own else WARNING)
        return Finding("P002", name, backend, f"no result after {proc.silent or timeout:.0f}s{at}: killed",
                       severity=d.timeout_severity if d is not None else ERROR)
    if proc.returncode == -signal.SIGKILL:  # from outside: the out-of-memory killer, not the kernel's own fault
        return Finding("P001", name, backend, f"the process was killed{at}: {exit_message(proc.returncode)}; most "
                                              f"often the machine ran out of memory (information: not a finding "
                                              f"about the kernel)", severity=INFO)
    if proc.returncode:
        d = registry.registry().get(name)
        why = f" ({ev.errors['']})" if ev.errors.get("") else ""  # the worker's last word: the error it died of
        return Finding(d.death_code if d is not None else "P001", name, backend,
                       f"the process died{at}: {exit_message(proc.returncode)}{why}"[:400])
    return Finding("P000", name, backend, f"the detector failed: {ev.errors.get('', 'no result')}"[:300])


def _tool_findings(detector: str, backend: str, proc) -> list:
    """What a tool (compute-sanitizer, TRITON_DEBUG, triton-viz) printed, as findings."""
    tool = _tool(detector)
    return tool.findings(detector, backend, proc.output_tail) if tool is not None else []


def _progress(backend: str, say):
    """An ``on_poll`` that says, as the worker goes, each detector's start, end and clock."""
    import json

    state = {"offset": 0, "t": {}}

    def poll(path: str) -> None:
        lines, state["offset"] = new_lines(path, state["offset"])
        for line in lines:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            kind, name = ev.get("event"), ev.get("detector")
            if kind == "start" and name:
                state["t"][name] = time.monotonic()
                say(f"{backend} {name}: started ({registry.registry()[name].what})" if name in registry.registry()
                    else f"{backend} {name}: started")
            elif kind == "skipped":
                say(f"{backend} {name}: skipped: {ev.get('reason', '')}")
                state["t"].pop(name, None)
            elif kind == "end" and name in state["t"]:
                say(f"{backend} {name}: done in {time.monotonic() - state['t'].pop(name):.1f}s")
    return poll


def probe(file: str, *, inputs: str | None = None, launcher: str = "launch", backends: list | None = None,
          detectors: list | None = None, seed: int = 0, sizes: dict | None = None, jobs: int = 2,
          timeout: float = TIMEOUT_S, options: dict | None = None, progress=None,
          budget: float | None = None, since: float | None = None) -> ProbeReport:
    """Run every detector on ``file`` (see ``harness.probe``); raise ProbeInputError for a bad file.

    The names and defaults are the command line's: ``detectors`` is ``--detectors`` (or ``--only``),
    ``backends`` None is ``--backend all`` (the GPU if there is one, and the interpreter), ``budget``
    None is ``budget.DEFAULT_BUDGET_S`` (0: no budget, each detector keeps to its own), counted from
    ``since`` (a time.monotonic() before the call: the command's own start) or from the call.
    """
    for p in (file, inputs):
        if p is not None and not os.path.isfile(p):
            raise ProbeInputError(f"{p}: no such file")
    if not isinstance(launcher, str) or not launcher.isidentifier():
        raise ProbeInputError(f"launcher {launcher!r} is not a Python function name")
    t0 = time.monotonic()
    chosen = list(backends or resolve_backends("all"))  # as the CLI: the GPU if there is one, and the interpreter
    if budget is None:
        budget = Budget.default_seconds(chosen)
    window = Budget.starting(budget, since=since)
    req = ProbeRequest(os.path.abspath(file), inputs=os.path.abspath(inputs) if inputs else None, launcher=launcher,
                       seed=seed, sizes=sizes or {}, cwd=os.getcwd(), options={**(options or {}), "budget": budget}, ends=window.ends,
                       stop=window.stop)
    report = ProbeReport(file, budget=budget)
    # the backends at once (the GPU's processes wait on the GPU, the interpreter's on the CPU); their
    # findings in the order named
    parts = {b: ProbeReport(file) for b in chosen}
    hung = threading.Event()  # set when the GPU's side hangs (_stop_when)
    with ThreadPoolExecutor(max_workers=len(chosen) or 1) as pool:
        running = pool.map(lambda b: _probe_backend(parts[b], req, b, detectors, jobs, timeout, progress, hung), chosen)
        _warm()
        list(running)
    for b in chosen:
        report.findings += parts[b].findings
        report.ran += parts[b].ran
        report.meta.update(parts[b].meta)
    report.findings = merge_repeated(report.findings)
    name_crashes(report)
    report.findings = one_int32_hazard(report.findings, report.meta)
    report.findings += _poison_only(report)
    report.findings += _tf32_only(report)
    report.findings += _backends_differ(report)
    attach_cases(report.findings)
    report.lint = _lint(file, _kernel_files(report))
    rediagnose(report)
    report.seconds = time.monotonic() - t0
    return report


def _warm() -> None:
    """The report's own imports (lint's rules, the diagnosis: 0.2-0.3 s on the 2-core CPU), made while
    the workers run: after them they would come past the budget's end."""
    import harness.lint  # noqa: F401
    import harness.probe.diagnosis  # noqa: F401


def rediagnose(report: ProbeReport) -> None:
    """The report's ranked diagnosis from its findings and evidence as they stand (again, where a
    caller set some findings aside), with lint's agreement."""
    report.diagnosis = _diagnose(report)


def _lint(file: str, kernel_files: list[str] = ()) -> list:
    """harness lint's findings in the probed file and in the modules that define the kernels the
    launcher launched, as dicts, each path as the user gave it (the probe file) or as the probe
    shows paths ([] for a file that cannot be read)."""
    from harness.lint import lint_source
    from harness.probe.findings import shown_path
    from harness.probe.kernels import source_text

    out, done = [], set()
    for path, shown in [(str(file), str(file))] + [(k, shown_path(k)) for k in kernel_files]:
        if os.path.abspath(path) in done:
            continue
        done.add(os.path.abspath(path))
        try:
            out += [f.as_dict() for f in lint_source(source_text(path), shown)]
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
    return out


def _kernel_files(report) -> list[str]:
    """The files defining the kernels the launcher launched, on every backend (the workers' "seen")."""
    files = []
    for meta in report.meta.values():
        seen = meta.get("seen") if isinstance(meta, dict) else None
        files += [f for f in (seen or {}).get("kernel_files") or [] if isinstance(f, str)]
    return list(dict.fromkeys(files))


def _merge_meta(into: dict, meta: dict) -> None:
    """``meta`` into ``into``; what the detectors saw (``seen``) merged key by key, the first
    process's evidence kept where two processes say the same thing."""
    seen = into.get("seen", {})
    for k, v in (meta.get("seen") or {}).items():
        if isinstance(v, dict) and isinstance(seen.get(k), dict):
            seen[k] = {**v, **seen[k]}
        else:
            seen.setdefault(k, v)
    into.update({k: v for k, v in meta.items() if k != "seen"})
    into["seen"] = seen


def _seen(report: ProbeReport, backend: str) -> Blackboard:
    """What the runs on ``backend`` showed (its workers' blackboards, merged)."""
    meta = report.meta.get(backend)
    return Blackboard.from_json((meta.get("seen") if isinstance(meta, dict) else None) or {})


def one_int32_hazard(findings: list, meta: dict) -> list:
    """The int32-offset hazard (P406) once: none where the GPU's run past 2**31 elements gave a verdict (its P404
    error, or its sampled rows right), the GPU's where both backends read it (its size counts the kernels' own
    buffers), else the interpreter's."""
    hazards = [f for f in findings if f.code == "P406"]
    if not hazards:
        return findings
    judged = any((Blackboard.from_json((m.get("seen") if isinstance(m, dict) else None) or {}).large_verdict)
                 for m in meta.values())
    keep = [] if judged else [next((f for f in hazards if f.backend == "gpu"), hazards[0])]
    # by identity: the GPU's hazard, said at once and again with its run's note, is two equal findings
    return [f for f in findings if f.code != "P406" or any(f is k for k in keep)]


def _poison_only(report: ProbeReport) -> list:
    """A warning when shape fuzzing met sizes where only poison in masked lanes made the result
    wrong (0 there is right) and the reference detector did not already say so."""
    if any(f.code == "P203" for f in report.findings):
        return []
    out = []
    for backend in report.meta:
        if p := _seen(report, backend).poison_only:
            sizes = ", ".join(f"{k}={v}" for k, v in p["sizes"].items())
            out.append(Finding("P203", "shapes", backend, f"masked lanes of a tl.load without other= enter the result "
                               f"at {sizes}: with poison in them {p['why']}; with 0 (what today's GPUs give, "
                               f"undefined in Triton) it matches"[:400], severity=WARNING, line=", ".join(p["lines"])))
    return out


def _tf32_only(report: ProbeReport) -> list:
    """A warning (P204) when shape fuzzing met sizes where only the TF32 rounding of an fp32 tl.dot
    made the result wrong, and the reference detector did not already say so."""
    if any(f.code == "P204" for f in report.findings):
        return []
    from harness.probe.context import Context, fmt
    from harness.probe import tf32_rounding as tf32

    out = []
    for backend in report.meta:
        if p := _seen(report, backend).tf32_only:
            ctx = Context(None, backend, 0, "shapes")
            out.append(tf32.finding(ctx, p["lines"], f"at {fmt(p['sizes'])}: {p['why']}", p["sizes"], p.get("chosen")))
    return out


def _diagnose(report: ProbeReport) -> list:
    """The ranked diagnosis from every finding and the experiments' evidence (all backends)."""
    from harness.probe.diagnosis import at_sizes, diagnose

    if not report.problems:
        return []
    observed, elsewhere, defaults = {}, {}, None
    for backend, meta in report.meta.items():
        sizes = meta.get("sizes") if isinstance(meta, dict) else None
        defaults = defaults if defaults is not None or not isinstance(sizes, dict) else sizes
        seen = _seen(report, backend)
        # the experiments' evidence explains the failure at the sizes they took apart (``failing``)
        into = observed if at_sizes(seen.failing, sizes if isinstance(sizes, dict) else None) else elsewhere
        for name, text in (seen.evidence or {}).items():
            into.setdefault(name, f"{backend}: {text}")
    return diagnose(report.findings, observed, elsewhere=elsewhere, defaults=defaults, lint=report.lint)


ADDRESS_SIGNALS = ("SIGSEGV", "SIGBUS")  # how a host process ends at an address outside its memory
BOUNDS_EVIDENCE = ("oob-store", "oob-load", "oob-load-unused")  # the diagnosis's bounds check ("where")


def name_crashes(report: ProbeReport) -> None:
    """A process that died of SIGSEGV or SIGBUS under the interpreter, where the diagnosis's bounds
    check at the same sizes (the ``where`` experiment, which runs them with each access outside
    a tensor recorded and not made) found one: the finding names that access. Under the
    interpreter a kernel's loads and stores are the host's own, so one at an address outside the
    process's memory ends it this way (a load past a tensor's end whose value then indexes
    another tensor: an index read past its end, used as an address), where a GPU may fault or
    read another buffer silently."""
    seen = _seen(report, "interpreter").evidence or {}
    for f in report.findings:
        if f.code != "P001" or f.backend != "interpreter" or not any(s in f.message for s in ADDRESS_SIGNALS):
            continue
        at = f.message.partition(" at sizes ")[2].partition(": ")[0]
        hits = [text.partition(": ")[2] for name, text in seen.items()
                if name in BOUNDS_EVIDENCE and at and text.startswith(f"at {at}: ")]
        if hits:
            f.message = f"{f.message}: an access outside memory; at these sizes the bounds check finds {hits[0]}"[:400]


def merge_repeated(findings: list) -> list:
    """One finding for a launcher that raises (or a process that dies) the same way in every
    detector that calls it, naming those detectors, not one row each."""
    out, first = [], {}
    for f in findings:
        if f.code in ("P001", "P003"):
            key = (f.code, f.backend, f.message, f.line)
            if key in first:
                first[key].detector += f", {f.detector}"
                continue
            first[key] = f
        out.append(f)
    return out


BOTH = tuple(d.name for d in registry.on("interpreter") if "gpu" in d.backends)  # the detectors each backend runs


def _backends_differ(report: ProbeReport) -> list:
    """Information when the GPU and the interpreter disagree, detector by detector (those both run):
    a problem one of them shows and the other does not is a behaviour of that backend (a hardware
    limit, timing, memory layout, TF32, poison) worth knowing about."""
    done = {(b, d) for b, d, _, st in report.ran if st == "done"}
    diffs = []
    for d in BOTH:
        if ("gpu", d) not in done or ("interpreter", d) not in done:
            continue
        codes = {b: sorted({f.code for f in report.problems if f.backend == b and f.detector == d})
                 for b in ("gpu", "interpreter")}
        if bool(codes["gpu"]) != bool(codes["interpreter"]):
            where = "gpu" if codes["gpu"] else "interpreter"
            diffs.append(f"{d}: {', '.join(codes[where])} on the {'GPU' if where == 'gpu' else 'interpreter'} only")
    if not diffs:
        return []
    return [Finding("P205", "backends", "gpu+interpreter", "the GPU and the interpreter disagree: "
                    + "; ".join(diffs), severity=INFO)]


TOOLS_OPT_IN = ("opt-in: --tools runs the kernel under compute-sanitizer, TRITON_DEBUG=1 and Triton's sanitizers on "
                "the GPU, triton-viz "
                "under the interpreter (a whole process under each, 20 to 130 s a kernel); memcheck, guard bands and "
                "shape fuzzing cover out-of-bounds accesses without them")


def _wanted(name: str, detectors, options: dict) -> bool:
    """A detector runs when asked for by name, or when none are named and it is not an opt-in tool."""
    if detectors is not None:
        return name in detectors
    return _tool(name) is None or bool(options.get("tools"))


def _probe_backend(report, req: ProbeRequest, backend, detectors, jobs, timeout, progress, hung=None) -> None:
    every = registry.batches(backend)
    batches = [b for b in ([d for d in b if _wanted(d, detectors, req.options)] for b in every) if b]
    skipped = [d for b in every for d in b if detectors is None and not _wanted(d, detectors, req.options)]
    if jobs == 1:
        batches = [[d for b in batches for d in b]] if batches else []
    say = progress or (lambda _m: None)

    def one(batch):
        try:
            return Batch(req, batch, backend, timeout, say, hung).run()
        except BackendUnavailable as e:
            return {}, {"unavailable": str(e)}

    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(batches) or 1))) as pool:
        done = list(pool.map(one, batches))
    if why := next((m["unavailable"] for _, m in done if "unavailable" in m), None):
        report.findings.append(Finding("P000", "all", backend, f"not run on {backend}: {why}", severity=INFO))
        report.ran.append((backend, "all", 0.0, "not run"))
        report.meta.setdefault(backend, {})["unavailable"] = why
        return
    order = [d.name for d in registry.on(backend)]
    merged = {k: v for results, _ in done for k, v in results.items()}
    for name in sorted(merged, key=lambda n: order.index(n) if n in order else len(order)):
        run = merged[name]
        report.findings += run.findings
        report.ran.append((backend, name, run.seconds, run.label))
    report.ran += [(backend, name, 0.0, f"skipped: {TOOLS_OPT_IN}") for name in skipped]
    for _, meta in done:
        _merge_meta(report.meta.setdefault(backend, {}), meta)
