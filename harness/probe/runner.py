"""Running the probe's detectors, each in its own process (``harness.probe.worker``).

A crash (a segfault in the interpreter, an illegal address on the GPU) or a hang of the
user's kernel ends that one process: it becomes a finding (P001, P002) naming the
detector and, for shape fuzzing, the sizes it was trying, and the other detectors
still run (on the GPU an illegal address is an exception, a P001 finding, and the
worker ends after that detector, as its CUDA context is broken; after a GPU hang the
rest of that process's detectors are not run, each would hang as long). The GPU tools
run the reference detector: compute-sanitizer memcheck at the small sizes
(``target.Target.small_sizes``) as ``harness.detectors.sanitizer`` runs it (its log file,
guard padding off, ``PYTORCH_NO_CUDA_MEMORY_CACHING=1``), and ``TRITON_DEBUG=1`` at the
full sizes (its int32 overflow checks need them). A
case folder that needs more GPUs than the machine has is one note (not run), not a failure.
A file that cannot be loaded (missing, raises at import, lacks the launcher,
make_inputs or reference) is a ``ProbeInputError`` with a one-line message.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from harness.probe.findings import INFO, Finding, attach_cases, problems
from harness.run.isolate import exit_message, run_process

INTERPRETER = ("reference", "guards", "memcheck", "race", "order", "shapes", "repeat", "first-call")
GPU = ("reference", "guards", "shapes", "repeat", "first-call", "compute-sanitizer", "triton-debug")
WHAT = {
    "reference": "the default sizes against the float64 reference",
    "guards": "guard bands around every tensor, poison in torch.empty",
    "memcheck": "every load and store against its tensor's bounds",
    "race": "stores to addresses other programs touch",
    "order": "the grid in other program orders",
    "shapes": "seeded shape fuzzing, shrunk to the smallest failure; grids at the GPU's sizes",
    "repeat": "identical runs, bitwise",
    "first-call": "the first call against the second (autotune)",
    "compute-sanitizer": "compute-sanitizer memcheck, no caching allocator",
    "triton-debug": "TRITON_DEBUG=1: device asserts and overflow checks",
}
DEFAULT_TIMEOUT = 120.0


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

    @property
    def problems(self) -> list:
        return problems(self.findings)

    @property
    def ok(self) -> bool:
        return not self.problems

    def by_code(self, code: str) -> list:
        return [f for f in self.findings if f.code == code]

    def text(self) -> str:
        from harness.probe.findings import case_links, table

        lines = [f"probe {self.file}: {len(self.problems)} problems, "
                 f"{len(self.findings) - len(self.problems)} notes ({self.seconds:.0f}s)", table(self.findings)]
        if links := case_links(self.findings):
            lines += ["", "casebook cases with the same defect:"] + [f"  {x}" for x in links]
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"file": self.file, "ok": self.ok, "seconds": round(self.seconds, 2), "meta": self.meta,
                "ran": [{"backend": b, "detector": d, "seconds": round(s, 2), "status": st} for b, d, s, st in self.ran],
                "findings": [f.to_json() for f in self.findings]}


class BackendUnavailable(Exception):
    """The file cannot run on this backend here (a case that needs more GPUs): a note, not a failure."""


def _events(proc) -> dict:
    """A worker's events sorted out: per detector its findings, and how far it got."""
    out = {"findings": {}, "meta": {}, "started": [], "ended": [], "errors": {}, "load": None, "unavailable": None,
           "trying": None}
    for ev in proc.events:
        kind = ev.pop("event", None)
        if kind == "start":
            out["started"].append(ev["detector"])
            out["trying"] = None
        elif kind == "end":
            out["ended"].append(ev["detector"])
        elif kind == "finding":
            out["findings"].setdefault(ev.get("detector", ""), []).append(Finding.from_json(ev))
        elif kind == "meta":
            out["meta"].update(ev)
        elif kind == "trying":
            out["trying"] = ev.get("sizes")
        elif kind == "error":
            if ev.get("phase") in ("load", "unavailable"):
                out[ev["phase"]] = ev["message"]
            else:
                out["errors"][ev.get("detector", "")] = ev["message"]
    return out


TOOLS = ("compute-sanitizer", "triton-debug")


def _worker_args(args: dict, todo: list, backend: str, timeout: float) -> tuple[dict, dict | None]:
    """The worker's arguments for the detectors ``todo``, and how to run it: a GPU tool runs the
    reference detector alone under the tool, at the small sizes for compute-sanitizer (None: the
    tool is not here)."""
    import itertools

    worker = {**args, "detectors": list(itertools.takewhile(lambda d: d not in TOOLS, todo)), "backend": backend,
              "timeout": timeout}
    if todo[0] not in TOOLS:
        return worker, {}
    worker["detectors"] = ["reference"]
    # padding is valid memory: it would hide accesses from compute-sanitizer, which is slow: the
    # small sizes. TRITON_DEBUG costs little and checks int32 overflow, which needs the full sizes.
    small = todo[0] == "compute-sanitizer"
    worker["options"] = {**worker["options"], "pad": 0, "small": small}
    return worker, _tool_run(todo[0])


def _run_worker(worker: dict, backend: str, timeout: float, extra: dict):
    """One worker process (the detectors each stop themselves after ``timeout``; the process
    limit, counted again from each detector's start, is the backstop for a hang they cannot
    stop: a GPU kernel that never returns). A tool's log file is read into the output."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="casebook-probe-") as tmp:
        log = os.path.join(tmp, "tool.log")
        if extra.get("log_file"):
            extra = {**extra, "wrapper": extra["wrapper"] + ["--log-file", log]}
        extra.pop("log_file", None)
        margin = 120 if extra.get("wrapper") else 30  # the process's start: imports, CUDA, compute-sanitizer's own
        proc = run_process("harness.probe.worker", worker, backend=backend, timeout=timeout + margin, **extra)
        if os.path.exists(log):
            with open(log, errors="replace") as f:
                text = f.read()
            head = text[:4000] + ("\n[...]\n" + text[-2000:] if len(text) > 6000 else text[4000:])
            proc.output_tail = head + "\n" + proc.output_tail
    return proc


def _batch(args: dict, names: list, backend: str, timeout: float, say) -> tuple[dict, dict]:
    """Run ``names`` in as few processes as it takes: a crash or a hang ends one detector, and the
    ones after it run in a new process. Returns {name: (findings, status, seconds)} and the meta."""
    results, meta, todo = {}, {}, list(names)
    while todo:
        t0 = time.monotonic()
        worker, extra = _worker_args(args, todo, backend, timeout)
        if extra is None:
            results[todo.pop(0)] = ([Finding("P000", "compute-sanitizer", backend, "compute-sanitizer not found "
                                             "(put it on PATH or set CUDA_HOME)", severity=INFO)], "not run", 0.0)
            continue
        proc = _run_worker(worker, backend, timeout, extra)
        ev = _events(proc)
        if ev["load"]:
            raise ProbeInputError(ev["load"])
        if ev["unavailable"]:
            raise BackendUnavailable(ev["unavailable"])
        meta.update(ev["meta"])
        _collect(results, todo, ev, proc, backend, (time.monotonic() - t0) / max(1, len(ev["started"])), say)
        left = len(worker["detectors"]) - len(ev["ended"])
        if not left:  # all it was asked ran (an exit status after that is compute-sanitizer's --error-exitcode)
            continue
        if not proc.hung and not ev["started"][len(ev["ended"]):] and (ev["ended"] or not proc.returncode):
            if proc.returncode:
                continue  # ended between two detectors (a broken CUDA context): the rest in a new process
            for _ in range(left):  # the process ended cleanly before starting them: report, do not loop
                name = todo.pop(0)
                results[name] = ([Finding("P000", name, backend, "the worker stopped before this detector")],
                                 "error", 0.0)
            continue
        _died(results, todo, ev, proc, backend, timeout, time.monotonic() - t0, say)
    return results, meta


def _died(results: dict, todo: list, ev: dict, proc, backend: str, timeout: float, dt: float, say) -> None:
    """The detector the process died or hung in; after a hang on the GPU, the rest are not run (a
    GPU kernel that never returns makes each of them wait as long)."""
    name = todo.pop(0)
    partial = _kept(name, ev["findings"].get("reference" if name in TOOLS else name, []))
    results[name] = (partial + [_ended(name, backend, proc, ev, timeout)], "hang" if proc.hung else "crash", dt)
    say(f"{backend} {name}: {results[name][1]}: {WHAT.get(name, '')}")
    if proc.hung and backend == "gpu":
        while todo:
            other = todo.pop(0)
            results[other] = ([Finding("P000", other, backend, f"not run: the kernel hung in the {name} detector",
                                       severity=INFO)], "not run", 0.0)


def _collect(results: dict, todo: list, ev: dict, proc, backend: str, dt: float, say) -> None:
    """The detectors that ended: their findings (a GPU tool's own, read from its output), in ``results``."""
    for name in ev["ended"]:
        label = todo.pop(0)  # as the user knows it: a GPU tool runs the reference detector
        own = _tool_findings(label, backend, proc)
        found = _kept(label, ev["findings"].get(name, []), own) + own
        for f in found:
            f.detector = label
        if name in ev["errors"]:
            found.append(Finding("P000", label, backend, f"the detector failed: {ev['errors'][name]}"[:300]))
        results[label] = (found, "error" if name in ev["errors"] else "done", dt)
        say(f"{backend} {label}: {results[label][1]}, {len(found)} findings: {WHAT.get(label, '')}")


def _kept(label: str, found: list, own: list | None = None) -> list:
    """A GPU tool's run of the reference detector keeps only a crash or a hang, and only when the
    tool itself reported nothing (the reference detector reports the rest already)."""
    if label not in TOOLS:
        return found
    return [] if own else [f for f in found if f.code in ("P001", "P002", "P403")]


def _ended(name: str, backend: str, proc, ev: dict, timeout: float) -> Finding:
    """The finding for a detector whose process died or hung in it."""
    at = f" at sizes {', '.join(f'{k}={v}' for k, v in ev['trying'].items())}" if ev["trying"] else ""
    if proc.hung:
        return Finding("P002", name, backend, f"no result after {timeout:.0f}s{at}: killed")
    if proc.returncode:
        return Finding("P001", name, backend, f"the process died{at}: {exit_message(proc.returncode)}")
    return Finding("P000", name, backend, f"the detector failed: {ev['errors'].get('', 'no result')}"[:300])


def _tool_run(name: str) -> dict | None:
    """How to run the reference detector under a GPU tool: compute-sanitizer memcheck as
    ``harness.detectors.sanitizer`` runs it (its own log file, CUDA API errors not reported,
    no caching allocator), or TRITON_DEBUG=1 (device asserts, integer overflow checks)."""
    if name == "triton-debug":
        return {"extra_env": {"TRITON_DEBUG": "1"}}
    from harness.detectors.sanitizer import compute_sanitizer, wrapper

    cs = compute_sanitizer()
    if cs is None:
        return None
    return {"wrapper": wrapper(cs, "memcheck"), "extra_env": {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}, "log_file": True}


def _tool_findings(detector: str, backend: str, proc) -> list:
    """What compute-sanitizer or TRITON_DEBUG printed."""
    if detector == "compute-sanitizer":
        from harness.detectors.sanitizer import sanitizer_summary

        s = sanitizer_summary(proc.output_tail)
        if s and s["errors"]:
            first = f"; first: {s['first']}" if s["first"] else ""
            return [Finding("P601", detector, backend, f"{s['errors']} errors{first}"[:300])]
    if detector == "triton-debug":
        from harness.detectors.triton_debug import ASSERTIONS

        for pat in ASSERTIONS:
            if (m := pat.search(proc.output_tail)) is not None:
                return [Finding("P602", detector, backend, f"device_assert fired: {m.group(1)}")]
    return []


def probe(file: str, *, inputs: str | None = None, launcher: str = "launch", backends: list | None = None,
          detectors: list | None = None, seed: int = 0, sizes: dict | None = None, jobs: int = 2,
          timeout: float = DEFAULT_TIMEOUT, options: dict | None = None, progress=None) -> ProbeReport:
    """Run every detector on ``file`` (see ``harness.probe``); raise ProbeInputError for a bad file."""
    for p in (file, inputs):
        if p is not None and not os.path.isfile(p):
            raise ProbeInputError(f"{p}: no such file")
    t0 = time.monotonic()
    args = {"file": os.path.abspath(file), "inputs": os.path.abspath(inputs) if inputs else None,
            "launcher": launcher, "seed": seed, "sizes": sizes or {}, "options": dict(options or {})}
    report = ProbeReport(file)
    for backend in backends or ["interpreter"]:
        _probe_backend(report, args, backend, detectors, jobs, timeout, progress)
    report.findings += _backends_differ(report)
    attach_cases(report.findings)
    report.seconds = time.monotonic() - t0
    return report


BOTH = ("reference", "guards", "shapes", "repeat", "first-call")  # the detectors each backend runs


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


# Detectors run in two processes side by side; each list runs in order in one process.
BATCHES = {"interpreter": (("reference", "shapes", "first-call", "repeat"), ("memcheck", "race", "guards", "order")),
           "gpu": (("reference", "shapes", "first-call", "repeat", "guards"), ("compute-sanitizer",), ("triton-debug",))}


def _probe_backend(report, args, backend, detectors, jobs, timeout, progress) -> None:
    batches = [[d for d in b if detectors is None or d in detectors] for b in BATCHES[backend]]
    batches = [b for b in batches if b]
    if jobs == 1:
        batches = [[d for b in batches for d in b]] if batches else []
    say = progress or (lambda _m: None)

    def one(batch):
        try:
            return _batch(args, batch, backend, timeout, say)
        except BackendUnavailable as e:
            return {}, {"unavailable": str(e)}

    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(batches) or 1))) as pool:
        done = list(pool.map(one, batches))
    if why := next((m["unavailable"] for _, m in done if "unavailable" in m), None):
        report.findings.append(Finding("P000", "all", backend, f"not run on {backend}: {why}", severity=INFO))
        report.ran.append((backend, "all", 0.0, "not run"))
        report.meta.setdefault(backend, {})["unavailable"] = why
        return
    order = [d for d in (INTERPRETER if backend == "interpreter" else GPU)]
    merged = {k: v for results, _ in done for k, v in results.items()}
    for name in sorted(merged, key=lambda n: order.index(n) if n in order else len(order)):
        found, status, dt = merged[name]
        report.findings += found
        report.ran.append((backend, name, dt, status))
    for _, meta in done:
        report.meta.setdefault(backend, {}).update(meta)
