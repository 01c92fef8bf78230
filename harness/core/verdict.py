"""What a kernel did on one backend, call by call, and whether the case declared it.

Observed behaviours (one per call, over all trials):

- ``ok``     every trial matches the reference, no guard tripped (and, for a fixed
             kernel of a case about determinism, every trial is bitwise identical)
- ``wrong``  every trial is wrong: differs from the reference, wrote past the end,
             or left output unwritten
- ``flaky``  the trials do not all agree bitwise
- ``crash``, ``hang``, ``error`` (the case itself failed to set up), ``skip``

How a declaration is satisfied:

- ``wrong``   by every trial being wrong (they may also disagree with each other)
- ``flaky``   by more than one distinct result
- ``ok``, ``hidden``   by ``ok``
- ``crash``, ``hang``, ``skip``   by themselves
- ``wrong|crash`` (several, where the hardware or the memory layout decides)   by any one

A run that ends before every requested trial of a call reported is a crash (or hang)
for that call, whatever the worker's exit status.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.core.events import RunResult
from harness.core.spec import CaseSpec


@dataclass(frozen=True)
class Observed:
    """What one call did over its trials: ``behaviour`` is ok, hidden, wrong, flaky, crash, hang,
    error or skip; ``all_wrong`` marks a flaky call whose every trial was also wrong. Its text (the
    verdict's ``observed``, in tables and records) is the behaviour, or "wrong, flaky";
    ``Observed.parse`` is the one reader of that text."""

    behaviour: str
    all_wrong: bool = False

    @classmethod
    def parse(cls, text: str) -> "Observed":
        return cls("flaky", all_wrong=True) if text == "wrong, flaky" else cls(text)

    def __str__(self) -> str:
        return "wrong, flaky" if self.flaky and self.all_wrong else self.behaviour

    @property
    def wrong(self) -> bool:
        """Every trial differed from the reference (flaky ones too, where ``all_wrong``)."""
        return self.behaviour == "wrong" or self.all_wrong

    @property
    def flaky(self) -> bool:
        return self.behaviour == "flaky"

    @property
    def kind(self) -> str:
        """ok (ok or hidden), wrong, flaky (wrong or not), crash, hang, error, skip."""
        return "ok" if self.behaviour in ("ok", "hidden") else self.behaviour


@dataclass
class CallVerdict:
    slug: str
    variant: str
    backend: str
    call: int
    expected: str
    observed: str
    as_declared: bool
    distinct: int = 0
    trials: int = 0
    requested: int = 0
    bad_trials: int = 0
    result: str = ""
    reference: str = ""
    max_abs: float | None = None
    max_rel: float | None = None
    notes: list = field(default_factory=list)
    device: str = ""

    def to_json(self) -> dict:
        return dict(self.__dict__)


def guard_notes(trials: list, probes: list) -> list[str]:
    notes = []
    past, unwritten = {}, {}
    for t in trials:
        for k, v in t.guard["wrote_past_end"].items():
            past[k] = max(past.get(k, 0), v)
        for k, v in t.guard["unwritten"].items():
            unwritten[k] = max(unwritten.get(k, 0), v)
    for k, v in past.items():
        notes.append(f"wrote past the end of {k} ({v} elements of padding)")
    for k, v in unwritten.items():
        notes.append(f"left {v} elements of {k} unwritten")
    for p in probes:
        if p.nonfinite_with_finite_padding < p.nonfinite_with_nan_padding:
            notes.append(f"read poison: {p.nonfinite_with_nan_padding} NaN outputs came from the padding")
        else:
            notes.append(f"{p.nonfinite_with_nan_padding} non-finite outputs, not from the padding")
    tuned = [sum(t.bench_calls) for t in trials]
    if any(tuned):
        notes.append(f"autotune launched the kernel {min(tuned)}-{max(tuned)} times before this call"
                     if min(tuned) != max(tuned) else f"autotune launched the kernel {tuned[0]} times before this call")
    if not probes:
        nf = max((t.nonfinite for t in trials), default=0)
        if nf:
            notes.append(f"{nf} non-finite outputs")
    return notes


def _satisfies(declared: str, observed: str, bad: list[bool], distinct: int, must_repeat: bool) -> bool:
    """Does what was seen (per-trial wrongness, distinct results) satisfy one declared behaviour?"""
    if declared in ("ok", "hidden"):
        return bool(bad) and not any(bad) and (distinct == 1 or not must_repeat)
    if declared == "wrong":
        return bool(bad) and all(bad)
    if declared == "flaky":
        return distinct > 1
    return declared == observed  # crash, hang, skip, error


def _from_status(v: CallVerdict, run: RunResult, trials: list) -> bool:
    """A run that gave no comparable result (skipped, failed to set up, died early): set v, True."""
    if run.status in ("skip", "error"):
        v.observed, v.result = run.status, run.message
    elif run.status in ("crash", "hang") and len(trials) < run.requested_trials:
        v.observed, v.result = run.status, run.message
    elif not trials:
        v.observed, v.result = "crash", run.message or "the run reported no result for this call"
    return bool(v.observed)


def _from_trials(v: CallVerdict, trials: list, probes: list) -> list[bool]:
    """Fill v from the trials of one call; return which trials were wrong."""
    bad = [t.bad for t in trials]
    v.bad_trials = sum(bad)
    v.distinct = len({t.fingerprint for t in trials})
    worst = max(trials, key=lambda t: (t.max_abs, t.n_bad))
    v.result, v.reference = worst.result, worst.reference
    v.max_abs, v.max_rel = worst.max_abs, worst.max_rel
    v.notes = guard_notes(trials, probes)
    v.observed = "flaky" if v.distinct > 1 else "wrong" if all(bad) else "ok"
    return bad


def judge_call(spec: CaseSpec, run: RunResult, call: int, declared: str) -> CallVerdict:
    """The verdict on one call: what was seen, and whether it is (one of) what was declared."""
    v = CallVerdict(spec.slug, run.variant, run.backend, call + 1, declared, "", False,
                    device=run.env.get("device", ""))
    trials = run.trials_of_call(call)
    v.trials, v.requested = len(trials), run.requested_trials
    alternatives = declared.split("|")
    if _from_status(v, run, trials):
        v.as_declared = v.observed in alternatives or run.unavailable
        return v
    bad = _from_trials(v, trials, [p for p in run.probes if p.call == call])
    must_repeat = (run.variant != "broken" or spec.calibration) and spec.deterministic
    met = [d for d in alternatives if _satisfies(d, v.observed, bad, v.distinct, must_repeat)]
    v.as_declared = bool(met)
    if v.as_declared and met[0] in ("ok", "hidden"):
        v.observed = met[0]
    if v.observed == "flaky" and all(bad):
        v.observed = str(Observed("flaky", all_wrong=True))
    return v


def judge(spec: CaseSpec, run: RunResult) -> list[CallVerdict]:
    """One verdict per call."""
    return [judge_call(spec, run, call, declared)
            for call, declared in enumerate(spec.expected(run.variant, run.backend))]
