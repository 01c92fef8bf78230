"""What a worker reports, as the rest of the harness reads it.

The worker (``harness.run.worker``) writes one JSON object per line; ``read_worker_events`` is
the one reader of those lines (``harness.run.isolate`` gives it what the worker wrote), and
``RunResult`` what a run comes to. A ``Trial`` is one call of one trial: the comparison with
the reference (``harness.core.compare``), the guard report (``harness.core.guards``), a
fingerprint of the output's bytes and the launches autotune made before it; a ``PaddingRerun`` is the
re-run with finite padding that tells a read of the NaN padding (kept under the key ``probes``, as the
committed records hold it; nothing to do with ``harness probe``). Each is written back (a
record's JSON) with the keys and in the order the worker wrote them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields


@dataclass
class Trial:
    """One call of one trial (the worker's "trial" event)."""

    call: int
    trial: int = 0
    fingerprint: str = ""  # equal fingerprints: bitwise-equal outputs
    guard: dict = field(default_factory=lambda: {"wrote_past_end": {}, "unwritten": {}})  # {tensor: elements}
    bench_calls: list = field(default_factory=list)  # autotune's benchmarking launches before the call
    close: bool = True
    n: int = 0
    n_bad: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    nonfinite: int = 0
    first_bad: int | None = None
    result: str = ""
    reference: str = ""

    @property
    def bad(self) -> bool:
        """Wrong: differs from the reference, wrote past the end, or left output unwritten."""
        return (not self.close) or bool(self.guard["wrote_past_end"]) or bool(self.guard["unwritten"])

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in _TRIAL_ORDER}


_TRIAL_ORDER = ("trial", "call", "fingerprint", "guard", "bench_calls", "close", "n", "n_bad", "max_abs", "max_rel",
                "nonfinite", "first_bad", "result", "reference")  # as the worker writes them


@dataclass
class PaddingRerun:
    """The re-run of calls up to ``call`` with finite padding (the worker's "padding-rerun" event)."""

    trial: int
    call: int
    nonfinite_with_nan_padding: int
    nonfinite_with_finite_padding: int

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class WorkerError:
    """The worker's "error" event: the phase it failed in (setup, launch, import) and why."""

    phase: str
    type: str = ""
    message: str = ""
    traceback: str = ""


@dataclass
class VariantEvents:
    """What the worker reported for one variant."""

    trials: list = field(default_factory=list)  # Trial
    probes: list = field(default_factory=list)  # PaddingRerun
    kernels: list | None = None  # on a GPU: the compiled kernels' {name, shared, num_warps}


@dataclass
class WorkerEvents:
    """Every event of one worker process, read: its environment, each variant's results, the
    variants it started and finished, and its error (None: it reported none)."""

    env: dict = field(default_factory=dict)
    variants: dict = field(default_factory=dict)  # variant -> VariantEvents
    started: list = field(default_factory=list)
    finished: list = field(default_factory=list)
    error: WorkerError | None = None

    def of(self, variant: str) -> VariantEvents:
        return self.variants.get(variant) or VariantEvents()


def _known(cls, event: dict) -> dict:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in event.items() if k in names}


def read_worker_events(events: list[dict]) -> WorkerEvents:
    """The one reader of a case worker's events (``harness.run.worker``'s docstring lists them);
    "t" (the timeline's, ``harness.run.timings``) and the progress events are not the result's."""
    out = WorkerEvents()
    for ev in events:
        kind, variant = ev.get("event"), ev.get("variant")
        if kind == "env":
            out.env = {k: v for k, v in ev.items() if k not in ("event", "t")}
        elif kind == "start":
            out.started.append(variant)
        elif kind == "finished":
            out.finished.append(variant)
        elif kind == "error":
            out.error = WorkerError(**_known(WorkerError, ev))
        elif kind in ("trial", "padding-rerun", "kernels"):
            got = out.variants.setdefault(variant, VariantEvents())
            if kind == "kernels":
                got.kernels = ev.get("kernels") or []
            else:
                (got.trials if kind == "trial" else got.probes).append(parse_trial(ev) if kind == "trial"
                                                                        else PaddingRerun(**_known(PaddingRerun, ev)))
    return out


def parse_trial(t) -> Trial:
    """A trial as the worker wrote it (or a recorded run holds it), or one already read."""
    return t if isinstance(t, Trial) else Trial(**_known(Trial, t))


def parse_padding_rerun(p) -> PaddingRerun:
    return p if isinstance(p, PaddingRerun) else PaddingRerun(**_known(PaddingRerun, p))


@dataclass
class RunResult:
    """One (case, variant, backend) run: what the worker reported, and how it ended. Trials and
    padding re-runs given as dicts (a recorded run's JSON) are read into ``Trial`` and ``PaddingRerun``."""

    slug: str
    variant: str
    backend: str
    status: str  # "done" (it finished), "crash" (it died), "hang" (it timed out), "error" (the case failed
    # to set up) or "skip" (the case does not run on that backend)
    message: str = ""
    env: dict = field(default_factory=dict)
    trials: list = field(default_factory=list)  # Trial, one per call of each trial
    probes: list = field(default_factory=list)  # PaddingRerun (the finite-padding re-run; the records' key)
    kernels: list | None = None  # on a GPU: the compiled kernels' {name, shared, num_warps}; None: not known
    returncode: int | None = None
    output_tail: str = ""
    requested_trials: int = 0
    unavailable: bool = False  # skipped because this machine lacks what the case needs (a second GPU)

    def __post_init__(self):
        self.trials = [parse_trial(t) for t in self.trials]
        self.probes = [parse_padding_rerun(p) for p in self.probes]

    def to_json(self) -> dict:
        return dict(self.__dict__)

    def trials_of_call(self, call: int) -> list[Trial]:
        return [t for t in self.trials if t.call == call]
