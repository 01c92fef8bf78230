"""What a worker reports, as the rest of the harness reads it.

The worker (``harness.run.worker``) writes one JSON object per line; ``harness.run.isolate``
reads them back into a ``RunResult``. A trial is one call of one trial: the comparison
with the reference (``harness.core.compare``), the guard report (``harness.core.guards``),
a fingerprint of the output's bytes and the launches autotune made before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RunResult:
    """One (case, variant, backend) run: what the worker reported, and how it ended."""

    slug: str
    variant: str
    backend: str
    status: str  # "done" (it finished), "crash" (it died), "hang" (it timed out), "error" (the case failed
    # to set up) or "skip" (the case does not run on that backend)
    message: str = ""
    env: dict = field(default_factory=dict)
    trials: list = field(default_factory=list)  # the worker's "trial" events
    probes: list = field(default_factory=list)  # its "probe" events (the finite-padding re-run)
    kernels: list | None = None  # on a GPU: the compiled kernels' {name, shared, num_warps}; None: not known
    returncode: int | None = None
    output_tail: str = ""
    requested_trials: int = 0
    unavailable: bool = False  # skipped because this machine lacks what the case needs (a second GPU)

    def to_json(self) -> dict:
        return dict(self.__dict__)

    def trials_of_call(self, call: int) -> list[dict]:
        return [t for t in self.trials if t["call"] == call]
