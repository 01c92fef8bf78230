"""Running the probe's detectors, each in its own process (``harness.probe.worker``).

A crash (a segfault in the interpreter, an illegal address on the GPU) or a hang of the
user's kernel ends that one process: it becomes a finding (P001, P002) naming the
detector and, for shape fuzzing, the sizes it was trying, and the other detectors
still run. A file that cannot be loaded (missing, raises at import, lacks the launcher,
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
    "shapes": "seeded shape fuzzing, shrunk to the smallest failure",
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


def _events(proc) -> dict:
    """A worker's events sorted out: per detector its findings, and how far it got."""
    out = {"findings": {}, "meta": {}, "started": [], "ended": [], "errors": {}, "load": None, "trying": None}
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
            if ev.get("phase") == "load":
                out["load"] = ev["message"]
            else:
                out["errors"][ev.get("detector", "")] = ev["message"]
    return out


def _batch(args: dict, names: list, backend: str, timeout: float, say) -> tuple[dict, dict]:
    """Run ``names`` in as few processes as it takes: a crash or a hang ends one detector, and the
    ones after it run in a new process. Returns {name: (findings, status, seconds)} and the meta."""
    results, meta, todo = {}, {}, list(names)
    while todo:
        t0 = time.monotonic()
        worker, extra = {**args, "detectors": todo, "backend": backend}, {}
        if todo[0] in ("compute-sanitizer", "triton-debug"):
            worker["detectors"], extra = ["reference"], _tool_run(todo[0])
            worker["options"] = {**worker["options"], "pad": 0}  # padding is valid memory: it would hide accesses
            if extra is None:
                results[todo.pop(0)] = ([Finding("P000", "compute-sanitizer", backend, "compute-sanitizer not found",
                                                 severity=INFO)], "not run", 0.0)
                continue
        worker["timeout"] = timeout  # each detector stops itself; the process limit is the backstop
        proc = run_process("harness.probe.worker", worker, backend=backend,
                           timeout=timeout * len(worker["detectors"]) + 60, **extra)
        ev = _events(proc)
        if ev["load"]:
            raise ProbeInputError(ev["load"])
        meta.update(ev["meta"])
        dt = (time.monotonic() - t0) / max(1, len(ev["started"]))
        for name in ev["ended"]:
            label = todo.pop(0)  # as the user knows it: a GPU tool runs the reference detector
            found = ev["findings"].get(name, []) + _tool_findings(label, backend, proc)
            for f in found:
                f.detector = label
            if name in ev["errors"]:
                found.append(Finding("P000", label, backend, f"the detector failed: {ev['errors'][name]}"[:300]))
            results[label] = (found, "error" if name in ev["errors"] else "done", dt)
            say(f"{backend} {label}: {results[label][1]}, {len(found)} findings: {WHAT.get(label, '')}")
        if not todo:  # all ran (an exit status after that is compute-sanitizer's --error-exitcode)
            break
        if not proc.hung and not proc.returncode and not ev["started"][len(ev["ended"]):]:
            for name in todo:  # the process ended cleanly before starting them: report, do not loop
                results[name] = ([Finding("P000", name, backend, "the worker stopped before this detector")],
                                 "error", 0.0)
            break
        name = todo.pop(0)
        results[name] = (ev["findings"].get(name, []) + [_ended(name, backend, proc, ev, timeout)],
                         "hang" if proc.hung else "crash", time.monotonic() - t0)
        say(f"{backend} {name}: {results[name][1]}: {WHAT.get(name, '')}")
    return results, meta


def _ended(name: str, backend: str, proc, ev: dict, timeout: float) -> Finding:
    """The finding for a detector whose process died or hung in it."""
    at = f" at sizes {', '.join(f'{k}={v}' for k, v in ev['trying'].items())}" if ev["trying"] else ""
    if proc.hung:
        return Finding("P002", name, backend, f"no result after {timeout:.0f}s{at}: killed")
    if proc.returncode:
        return Finding("P001", name, backend, f"the process died{at}: {exit_message(proc.returncode)}")
    return Finding("P000", name, backend, f"the detector failed: {ev['errors'].get('', 'no result')}"[:300])


def _tool_run(name: str) -> dict | None:
    """How to run the reference detector under a GPU tool (untested here: no GPU)."""
    if name == "triton-debug":
        return {"extra_env": {"TRITON_DEBUG": "1"}}
    from harness.detectors.sanitizer import compute_sanitizer

    cs = compute_sanitizer()
    if cs is None:
        return None
    return {"wrapper": [cs, "--tool", "memcheck", "--error-exitcode", "99", "--print-limit", "10"],
            "extra_env": {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}}


def _tool_findings(detector: str, backend: str, proc) -> list:
    """What compute-sanitizer or TRITON_DEBUG printed (GPU only; untested here)."""
    if detector == "compute-sanitizer":
        from harness.detectors.sanitizer import sanitizer_summary

        s = sanitizer_summary(proc.output_tail)
        if s and s["errors"]:
            return [Finding("P601", detector, backend, f"{s['errors']} errors; first: {s['first']}")]
    if detector == "triton-debug":
        import re

        m = re.search(r"Assertion `([^`]*)` failed|(int\d+ overflow detected for operation \w+)", proc.output_tail)
        if m:
            return [Finding("P602", detector, backend, f"device_assert fired: {m.group(1) or m.group(2)}")]
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
    attach_cases(report.findings)
    report.seconds = time.monotonic() - t0
    return report


# Detectors run in two processes side by side; each list runs in order in one process.
BATCHES = {"interpreter": (("reference", "shapes", "first-call", "repeat"), ("memcheck", "race", "guards", "order")),
           "gpu": (("reference", "shapes", "first-call", "repeat", "guards"), ("compute-sanitizer",), ("triton-debug",))}


def _probe_backend(report, args, backend, detectors, jobs, timeout, progress) -> None:
    batches = [[d for d in b if detectors is None or d in detectors] for b in BATCHES[backend]]
    batches = [b for b in batches if b]
    if jobs == 1:
        batches = [[d for b in batches for d in b]] if batches else []
    say = progress or (lambda _m: None)
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(batches) or 1))) as pool:
        done = list(pool.map(lambda b: _batch(args, b, backend, timeout, say), batches))
    order = [d for d in (INTERPRETER if backend == "interpreter" else GPU)]
    merged = {k: v for results, _ in done for k, v in results.items()}
    for name in sorted(merged, key=lambda n: order.index(n) if n in order else len(order)):
        found, status, dt = merged[name]
        report.findings += found
        report.ran.append((backend, name, dt, status))
    for _, meta in done:
        report.meta.setdefault(backend, {}).update(meta)
