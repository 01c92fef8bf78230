"""What a probe worker is asked to do: one ``ProbeRequest``, built by ``harness.probe.runner``,
crossing the process boundary once as JSON (``to_json``, ``from_json``), typed on both sides."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from harness.probe.budget import TIMEOUT_S, Budget


@dataclass(frozen=True)
class ProbeRequest:
    file: str  # the probe file (absolute)
    inputs: str | None = None  # a file with make_inputs and reference, where the kernel's file lacks them
    launcher: str = "launch"  # the function of ``file`` that launches the kernel
    backend: str = "interpreter"  # the worker's backend ("gpu" or "interpreter")
    detectors: list = field(default_factory=list)  # run in this order in the worker's process
    sizes: dict = field(default_factory=dict)  # --sizes: over the file's own
    seed: int = 0
    cwd: str | None = None  # the user's working directory: the worker runs there (relative paths as the user means them)
    # tf32, poison_masked, fuzz_trials, blocks, large, tools, empty; budget (--budget's seconds, 0: none);
    # pinned (sizes shape fuzzing keeps at their defaults); gpu_sizes (the GPU's sizes: a dict over the
    # file's GPU_SIZES, or False for none);
    # pad and small for a GPU tool's run; tool_kernels (names: the only kernels a GPU tool checks)
    options: dict = field(default_factory=dict)
    timeout: float = TIMEOUT_S  # each detector's own limit (--timeout)
    ends: float | None = None  # the budget's window (``Budget``): by which the detectors wrap up, or None
    stop: float | None = None  # and at which a detector still running is stopped
    failing: dict | None = None  # an earlier process died at these sizes ({}: the file's): the diagnosis starts there
    events: str = ""  # the file the worker appends its events to (``harness.run.isolate.run_process`` sets it)

    def to_json(self) -> dict:
        out = dataclasses.asdict(self)
        if self.failing is None:
            del out["failing"]
        return out

    @classmethod
    def from_json(cls, data: dict) -> "ProbeRequest":
        """The request of a worker's JSON argument; an unknown key is the harness's own error (TypeError)."""
        return cls(**data)

    def with_(self, **changes) -> "ProbeRequest":
        return dataclasses.replace(self, **changes)

    @property
    def budget_s(self) -> float:
        """--budget's seconds (0: none)."""
        return float(self.options.get("budget") or 0.0)

    def budget(self, clock=None) -> Budget:
        """The worker's Budget: the probe's window, on ``clock``."""
        return Budget(self.budget_s, ends=self.ends, stop=self.stop, clock=clock)
