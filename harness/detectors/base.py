"""The detectors: each a small check that says whether it would have caught a case's bug.

A detector looks at what one variant did on one backend (its ``Evidence``: the main
run's events and, for some detectors, one extra run of their own) and returns a
``Finding``: ``flagged``, ``quiet``, ``n/a`` (it does not apply there) or ``not run``
(it could not run here: no GPU, tool missing), with a one-line reason.

A detector *catches* a case when it flags the broken kernel; flagging the fixed
kernel is a *false alarm*. ``harness.detect`` runs them; ``harness.report`` scores
them, the way a race-detection benchmark scores its tools.

Most detectors read the worker's events (``trial``: comparison, fingerprint, guard
report, autotune launches; ``probe``: the re-run with finite padding). The others
read the output of an extra run, which ``harness.detect`` starts:

- ``first-call``   calls=2 at small sizes, for cases that declare one call
- ``memcheck``, ``racecheck``   the worker under compute-sanitizer (GPU)
- ``triton-debug``   the worker with ``TRITON_DEBUG=1`` (GPU; the interpreter ignores it)
- ``triton-viz``   the worker with triton-viz's sanitizer around each kernel (optional)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

FLAGGED, QUIET, NA, NOT_RUN = "flagged", "quiet", "n/a", "not run"
STATUSES = (FLAGGED, QUIET, NA, NOT_RUN)
MAX_REASON = 160


@dataclass
class Finding:
    status: str
    reason: str
    source: str = ""  # set when the finding comes from an older recorded run

    def to_json(self) -> dict:
        d = {"status": self.status, "reason": self.reason}
        if self.source:
            d["source"] = self.source
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Finding":
        return cls(d.get("status", NOT_RUN), d.get("reason", ""), d.get("source", ""))


@dataclass
class Evidence:
    """What one variant did on one backend: the main run, and the detectors' extra runs."""

    spec: object  # CaseSpec
    backend: str
    variant: str
    run: object = None  # isolate.RunResult of the main run
    extra: dict = field(default_factory=dict)  # detector name -> RunResult, or a str: why it was not run


def _unwrap(text: str) -> str:
    """``E('E(\\'NameError("x")\\')')`` (an exception re-raised in layers) to ``NameError: x``."""
    found = list(re.finditer(r"(\w+(?:Error|Exception))\(\\*([\"'])", text))
    if len(found) < 2:
        return text
    plain = text.replace("\\", "")
    m = list(re.finditer(r"(\w+(?:Error|Exception))\(([\"'])", plain))[-1]
    rest = plain[m.end():]
    end = rest.find(m.group(2) + ")")
    return f"{plain[:found[0].start()]}{m.group(1)}: {rest[:end] if end >= 0 else rest}"


def _count(n: int, noun: str, plural: str = "s") -> str:
    return f"{n} {noun}{'' if n == 1 else plural}"


def _short(text: str, n: int = MAX_REASON) -> str:
    text = " ".join(_unwrap(str(text)).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _bad(t: dict) -> bool:
    g = t.get("guard", {})
    return (not t.get("close", True)) or bool(g.get("wrote_past_end")) or bool(g.get("unwritten"))


def _no_result(run, what: str = "run") -> tuple[str, str] | None:
    """The finding when ``run`` gave no result to judge, else None."""
    if run is None:
        return NOT_RUN, f"no {what}"
    if isinstance(run, str):
        return (NA if run.startswith("n/a") else NOT_RUN), run.removeprefix("n/a: ").removeprefix("not run: ")
    if run.status == "skip":
        return NA, f"not run on this backend: {run.message}"
    if run.status == "error":
        return NOT_RUN, f"the case failed to set up: {run.message}"
    if not run.trials:
        return NA, f"no result to check: the {what} ended in {run.status} ({run.message})"
    return None


def _calls(trials: list) -> dict[int, list]:
    out: dict[int, list] = {}
    for t in trials:
        out.setdefault(t["call"], []).append(t)
    return out


# --- checks on the main run's events -------------------------------------------------

def check_reference(ev: Evidence) -> tuple[str, str]:
    if (r := _no_result(ev.run)) is not None:
        return r
    bad = [t for t in ev.run.trials if not t["close"]]
    if not bad:
        return QUIET, f"all {len(ev.run.trials)} results match the reference"
    worst = max(bad, key=lambda t: (t["max_abs"], t["n_bad"]))
    runs = len({(t["trial"], t["call"]) for t in bad})
    return FLAGGED, f"{runs} of {len(ev.run.trials)} results wrong; call {worst['call'] + 1}: " \
                    f"{worst['result']} (reference {worst['reference']})"


def check_repeat(ev: Evidence) -> tuple[str, str]:
    if (r := _no_result(ev.run)) is not None:
        return r
    by_call = _calls(ev.run.trials)
    if max(len(ts) for ts in by_call.values()) < 2:
        return NA, "one run only: nothing to compare"
    parts = []
    for call, ts in sorted(by_call.items()):
        distinct = len({t["fingerprint"] for t in ts})
        if distinct > 1:
            parts.append(f"call {call + 1}: {distinct} distinct results over {len(ts)} runs")
    if parts:
        allowed = ev.variant == "fixed" and not getattr(ev.spec, "deterministic", True)
        note = " (the case allows the fixed kernel to vary: deterministic = false)" if allowed else ""
        return FLAGGED, "; ".join(parts) + note
    n = max(len(ts) for ts in by_call.values())
    return QUIET, f"bitwise identical over {n} runs"


def _first_vs_later(trials: list) -> tuple[str, str]:
    per_trial: dict[int, dict[int, dict]] = {}
    for t in trials:
        per_trial.setdefault(t["trial"], {})[t["call"]] = t
    pairs = [calls for calls in per_trial.values() if 0 in calls and len(calls) > 1]
    if not pairs:
        return NA, "no second call to compare with"
    word = {True: "wrong", False: "right"}
    for calls in pairs:
        first = calls[0]
        for k in sorted(calls)[1:]:
            if _bad(first) != _bad(calls[k]):
                tuned = sum(first.get("bench_calls", []))
                note = f"; autotune ran the kernel {tuned} times before call 1" if tuned else ""
                return FLAGGED, f"call 1 {word[_bad(first)]} ({first['result']}), " \
                                f"call {k + 1} {word[_bad(calls[k])]}{note}"
    both = {_bad(c) for calls in pairs for c in calls.values()}
    return QUIET, f"first and later calls agree ({' and '.join(word[b] for b in sorted(both))})"


def check_first_call(ev: Evidence) -> tuple[str, str]:
    run = ev.extra.get("first-call", ev.run)
    if (r := _no_result(run, "two-call run")) is not None:
        return r
    return _first_vs_later(run.trials)


def check_canary(ev: Evidence) -> tuple[str, str]:
    if (r := _no_result(ev.run)) is not None:
        return r
    past, unwritten = {}, {}
    for t in ev.run.trials:
        for k, v in t["guard"]["wrote_past_end"].items():
            past[k] = max(past.get(k, 0), v)
        for k, v in t["guard"]["unwritten"].items():
            unwritten[k] = max(unwritten.get(k, 0), v)
    parts = [f"wrote {v} padding elements around {k}" for k, v in past.items()]
    parts += [f"left {v} elements of {k} unwritten" for k, v in unwritten.items()]
    if parts:
        return FLAGGED, "; ".join(parts)
    return QUIET, "padding and output canaries intact"


def check_poison(ev: Evidence) -> tuple[str, str]:
    if (r := _no_result(ev.run)) is not None:
        return r
    for p in ev.run.probes:
        if p["nonfinite_with_finite_padding"] < p["nonfinite_with_nan_padding"]:
            return FLAGGED, f"{p['nonfinite_with_nan_padding']} NaN outputs came from reading the NaN padding " \
                            f"(call {p['call'] + 1})"
    if ev.run.probes:
        return QUIET, "non-finite outputs, but not from the padding"
    return QUIET, "no output traced to the padding"


def check_nan_scan(ev: Evidence) -> tuple[str, str]:
    if (r := _no_result(ev.run)) is not None:
        return r
    nf = max(t["nonfinite"] for t in ev.run.trials)
    if not nf:
        return QUIET, "no NaN or Inf where the reference is finite"
    probes = ev.run.probes
    if probes and all(p["nonfinite_with_finite_padding"] == 0 for p in probes):
        return QUIET, f"{nf} NaN outputs, all from the harness's NaN padding (see poison reads)"
    own = max((p["nonfinite_with_finite_padding"] for p in probes), default=nf)
    return FLAGGED, f"{own} NaN/Inf outputs where the reference is finite"


# --- checks on extra runs --------------------------------------------------------------

_SUMMARY = re.compile(r"ERROR SUMMARY: (\d+) errors?\b(?! were not printed)")
_HAZARDS = re.compile(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)")
_FIRST = re.compile(r"=+\s+((?:Invalid|Race|Error|Warning|Out-of-range|Misaligned|Malformed|Uninitialized)"
                    r"[^\n]*)(?:\n=+\s+at ([^\n]*))?")


def sanitizer_summary(output: str) -> dict | None:
    """compute-sanitizer's verdict from its output: error count, hazards, first report."""
    counts = [int(m.group(1)) for m in _SUMMARY.finditer(output)]
    if not counts:  # racecheck prints its own summary line instead
        counts = [int(m.group(2)) for m in _HAZARDS.finditer(output)]
    if not counts:
        return None
    out = {"errors": max(counts), "warnings": 0, "first": ""}
    if (h := _HAZARDS.search(output)) is not None:
        out["warnings"] = int(h.group(3))
    if (m := _FIRST.search(output)) is not None:
        where = re.sub(r"(?<![\w.])/\S*/", "", m.group(2) or "").strip()  # paths to file names
        out["first"] = m.group(1).strip() + (f" at {where}" if where else "")
    return out


def _sanitizer_check(tool: str) -> Callable[[Evidence], tuple[str, str]]:
    def check(ev: Evidence) -> tuple[str, str]:
        run = ev.extra.get(tool)
        if run is None or isinstance(run, str):
            return _no_result(run, f"{tool} run")
        if run.status == "skip":
            return NA, f"not run on this backend: {run.message}"
        if run.status == "error":
            return NOT_RUN, f"the case failed to set up under compute-sanitizer: {run.message}"
        s = sanitizer_summary(run.output_tail)
        if s is None:
            if run.status == "hang":
                return NOT_RUN, f"compute-sanitizer {tool}: {run.message}"
            return NOT_RUN, f"compute-sanitizer printed no ERROR SUMMARY ({run.status}: {run.message or 'no message'})"
        if s["errors"]:
            first = f"; first: {s['first']}" if s["first"] else ""
            return FLAGGED, f"{_count(s['errors'], 'error')}{first}"
        extra = f", {s['warnings']} warnings" if s["warnings"] else ""
        crashed = f" (the run ended in {run.status}: {run.message})" if run.status != "done" else ""
        return QUIET, f"0 errors{extra}{crashed}"

    return check


_ASSERT = [re.compile(p) for p in (r"Assertion `([^`]*)` failed", r"(int\d+ overflow detected for operation \w+)",
                                   r"(device-side assert triggered)")]


def check_triton_debug(ev: Evidence) -> tuple[str, str]:
    run = ev.extra.get("triton-debug")
    if run is None or isinstance(run, str):
        return _no_result(run, "TRITON_DEBUG=1 run")
    if run.status in ("skip", "error"):
        return _no_result(run)
    text = run.output_tail + "\n" + run.message
    for pat in _ASSERT:
        if (m := pat.search(text)) is not None:
            return FLAGGED, f"device_assert fired: {m.group(1)}"
    if run.status == "done":
        return QUIET, "no device_assert or overflow check fired"
    main = ev.run if ev.run is not None and not isinstance(ev.run, str) else None
    if main is not None and main.status == run.status:
        return QUIET, f"no assertion fired (without TRITON_DEBUG the run ends in {run.status} too)"
    return NOT_RUN, f"the TRITON_DEBUG=1 run ended in {run.status} without an assertion: {run.message}"


VIZ_MARK, VIZ_UNAVAILABLE = "TRITON-VIZ SANITIZER:", "TRITON-VIZ UNAVAILABLE:"  # printed by harness.viz_sanitizer
_VIZ = re.compile(re.escape(VIZ_MARK) + r" (\d+) out-of-bounds accesses(?:; first: (.*))?")


def check_triton_viz(ev: Evidence) -> tuple[str, str]:
    run = ev.extra.get("triton-viz")
    if run is None or isinstance(run, str):
        return _no_result(run, "triton-viz run")
    if run.status == "skip":
        return NA, f"not run on this backend: {run.message}"
    if VIZ_UNAVAILABLE in run.output_tail:
        line = run.output_tail.split(VIZ_UNAVAILABLE, 1)[1].splitlines()[0]
        return NOT_RUN, f"triton-viz unavailable:{line}"
    m = _VIZ.search(run.output_tail)
    if m is not None and int(m.group(1)):
        first = f"; first: {m.group(2)}" if m.group(2) else ""
        return FLAGGED, f"{_count(int(m.group(1)), 'out-of-bounds access', 'es')}{first}"
    if run.status == "done" and m is not None:
        return QUIET, "no load or store can leave its tensor"
    return NOT_RUN, f"triton-viz failed: {run.status}: {run.message or 'no message'}"


# --- across backends ----------------------------------------------------------------------

def behaviour_class(observed: str) -> str:
    """ok / wrong / flaky / crash / hang / ..., from a verdict's observed behaviour."""
    if observed in ("ok", "hidden"):
        return "ok"
    if "flaky" in observed:
        return "flaky"
    return observed


def check_divergence(gpu_verdicts: list | None, interp_verdicts: list | None) -> tuple[str, str]:
    """Flag when a kernel's behaviour class differs between the GPU and the interpreter.

    Sizes differ between backends, so the results cannot be compared value by value;
    what can be compared is whether each is right, wrong, varies, or dies.
    """
    if not gpu_verdicts:
        return NOT_RUN, "no GPU run (here or recorded)"
    if not interp_verdicts:
        return NOT_RUN, "no interpreter run"
    parts, same = [], []
    for g, i in zip(gpu_verdicts, interp_verdicts):
        cg, ci = behaviour_class(g["observed"]), behaviour_class(i["observed"])
        if {cg, ci} & {"skip", "error", ""}:
            return NA, f"not run on both backends (gpu {g['observed']}, interpreter {i['observed']})"
        call = f"call {g['call']}: " if len(gpu_verdicts) > 1 else ""
        if cg != ci:
            parts.append(f"{call}GPU {g['observed']}, interpreter {i['observed']}")
        else:
            same.append(f"{call}{cg}")
    if parts:
        return FLAGGED, "; ".join(parts)
    return QUIET, f"same on both: {', '.join(same)}"


# --- the registry -------------------------------------------------------------------------

@dataclass(frozen=True)
class Detector:
    name: str
    label: str  # a column header
    where: str  # "both" (each backend), "gpu", "interpreter", or "across" (needs both)
    what: str  # what it checks, one line
    yours: str  # how to do it for your own kernel, one line
    check: Callable | None = None  # Evidence -> (status, reason); None for "across"
    optional: bool = False


DETECTORS = [
    Detector("reference", "reference", "both",
             "compares every result with a float64 reference (rtol/atol from case.toml)",
             "torch.testing.assert_close(out, ref_in_float64) on sizes that are not multiples of the block",
             check_reference),
    Detector("repeat", "repeat runs", "both",
             "runs the kernel N times on the same inputs and compares the results bitwise",
             "run it 10-20 times and compare hashes of the bytes, not allclose",
             check_repeat),
    Detector("first-call", "first call", "both",
             "compares the first call (which autotunes) with later calls in the same process",
             "test a freshly autotuned kernel on a new shape, first call included; never warm up first",
             check_first_call),
    Detector("poison", "poison reads", "both",
             "inputs sit in NaN padding; a NaN output that disappears with finite padding was read past the end",
             "allocate inputs inside a NaN-filled buffer and hand the kernel a view",
             check_poison),
    Detector("canary", "canary writes", "both",
             "outputs and their padding start as a canary: changed padding or leftover canary is reported",
             "fill outputs and a margin around them with a sentinel; check both after the call",
             check_canary),
    Detector("nan-scan", "NaN/Inf scan", "both",
             "looks for NaN or Inf where the reference is finite (not counting the harness's own NaN padding)",
             "assert torch.isfinite(out).all()",
             check_nan_scan),
    Detector("divergence", "GPU vs interpreter", "across",
             "compares the behaviour (ok / wrong / flaky / crash) on the GPU with the interpreter's",
             "run the test suite once with TRITON_INTERPRET=1 and once on the GPU"),
    Detector("memcheck", "memcheck", "gpu",
             "compute-sanitizer --tool memcheck, guard padding off and PYTORCH_NO_CUDA_MEMORY_CACHING=1",
             "PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python your_test.py",
             _sanitizer_check("memcheck")),
    Detector("racecheck", "racecheck", "gpu",
             "compute-sanitizer --tool racecheck: shared-memory hazards only, not global memory",
             "compute-sanitizer --tool racecheck python your_test.py",
             _sanitizer_check("racecheck")),
    Detector("triton-debug", "TRITON_DEBUG", "gpu",
             "TRITON_DEBUG=1: compiles tl.device_assert and int32 add/sub/mul overflow checks into the kernel",
             "TRITON_DEBUG=1 python your_test.py (or @triton.jit(debug=True)); GPU only",
             check_triton_debug),
    Detector("triton-viz", "triton-viz", "interpreter",
             "triton-viz's symbolic sanitizer (z3) checks every load and store against its tensor's bounds",
             "pip install triton-viz; triton-sanitizer your_test.py",
             check_triton_viz, optional=True),
]
BY_NAME = {d.name: d for d in DETECTORS}


def applies(det: Detector, backend: str) -> bool:
    return det.where in ("both", backend)


def evaluate(ev: Evidence, skip: frozenset = frozenset()) -> dict[str, Finding]:
    """Every per-backend detector on one variant's evidence; one bad check never stops the others."""
    out = {}
    for det in DETECTORS:
        if det.check is None:
            continue
        if det.name in skip:
            out[det.name] = Finding(NOT_RUN, "skipped (--skip)")
            continue
        if not applies(det, ev.backend):
            where = "a GPU" if det.where == "gpu" else "the CPU interpreter"
            reason = f"runs on {where} only"
            if det.name == "triton-debug":
                reason = "the interpreter ignores TRITON_DEBUG: device_assert and overflow checks are no-ops"
            out[det.name] = Finding(NA, reason)
            continue
        try:
            status, reason = det.check(ev)
        except Exception as e:  # a detector's own bug is one line, not a traceback
            status, reason = NOT_RUN, f"detector failed: {type(e).__name__}: {e}"
        out[det.name] = Finding(status, _short(reason))
    return out


def outcome(broken: str, fixed: str) -> str:
    """One word for a detector on one case: caught, missed, false alarm, ..."""
    if fixed == FLAGGED:
        return "caught, false alarm" if broken == FLAGGED else "false alarm"
    if broken == FLAGGED:
        return "caught"
    if broken == QUIET:
        return "missed"
    return broken


def score(rows: list[tuple[str, str, str]]) -> dict:
    """DataRaceBench-style counts from (variant, status, ...) rows of one detector.

    True positive: a broken kernel flagged; false negative: a broken kernel not
    flagged; false positive: a fixed kernel flagged; true negative: a fixed kernel
    quiet. n/a and not run count apart.
    """
    c = {"tp": 0, "fn": 0, "fp": 0, "tn": 0, "na": 0}
    for variant, status, *_ in rows:
        if status not in (FLAGGED, QUIET):
            c["na"] += 1 if variant == "broken" else 0
        elif variant == "broken":
            c["tp" if status == FLAGGED else "fn"] += 1
        else:
            c["fp" if status == FLAGGED else "tn"] += 1
    judged = c["tp"] + c["fn"]
    c["recall"] = c["tp"] / judged if judged else None
    flagged = c["tp"] + c["fp"]
    c["precision"] = c["tp"] / flagged if flagged else None
    return c
