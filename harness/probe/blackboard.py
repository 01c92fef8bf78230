"""What the runs of one probe worker showed, shared by its detectors and experiments: the
``Blackboard`` (``Context.board``), with a named, typed field for each thing one of them writes and
another reads (a skip rule, the diagnosis, the budget's reserve), and what goes to the parent in the
worker's ``meta`` event (``to_json``; ``from_json`` on the parent's side).

A field left at None was not seen (the parent's JSON leaves it out): "not known yet" is not False.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

# the fields that stay in the worker (work a detector leaves for one after it, a cache): not sent
LOCAL = ("fuzz_left", "fuzz_now", "reference_now", "layout_now", "scalars_now", "special_now", "sentinel_now", "outcomes",
         "large_pilot")


@dataclass
class Blackboard:
    # where the diagnosis starts: the smallest sizes shown wrong (or where an earlier process died)
    failing: dict | None = None
    # a result seen wrong by the detector still running (shape fuzzing): the budget's reserve for the
    # diagnosis counts from then; cleared at the detector's end (its errors set ``failing``)
    wrong_now: bool | None = None
    atomics: bool | None = None  # the kernels use atomics (a run counted them, or the source says so)
    autotune: bool | None = None  # a kernel is autotuned
    # autotuned kernels with atomics and no reset_to_zero/restore_value (None: the source not read yet)
    unreset_atomics: list | None = None
    poisoned_loads: list | None = None  # lines whose masked loads read poison (the reference detector)
    # addresses one program of a launch writes and another touches (the race detector; None: its record
    # was cut short)
    cross_program: int | None = None
    # sizes where only poison in masked lanes made the result wrong: {"sizes", "lines", "why"}
    poison_only: dict | None = None
    # sizes wrong only through the TF32 rounding of an fp32 tl.dot left at Triton's default (shapes):
    # right without it, so the reference detector's P204 warning, not a wrong result
    tf32_only: dict | None = None
    kernel_files: list | None = None  # the files defining the kernels launched (the lint cross-check reads them)
    # int32 offsets that grow with a size in the launched kernels' addresses (harness.probe.int32_offsets)
    int32_offsets: list | None = None
    # the large detector's run past 2**31 elements: "wrong" (P404) or "right" (sampled rows checked); None: no verdict
    large_verdict: str | None = None
    # seconds of the budget the detectors before the large detector leave it (``Detector.holds``); None: not decided
    large_hold: float | None = None
    compared: int | None = None  # sizes shape fuzzing compared with the reference (ProbeReport.checked)
    fuzz: dict | None = None  # shape fuzzing's progress: {"tried", "planned", "seconds", "last"}
    found_at: list | None = None  # sizes where shape fuzzing found each failure (before shrinking)
    experiments: list | None = None  # the diagnosis' experiments run so far, with their seconds
    evidence: dict | None = None  # the diagnosis' evidence: {experiment key: what it showed}
    # -- kept in the worker (LOCAL) --
    # the large detector's pilot, made early to size its hold (``large._holds``): {"plan": the plan's sizes,
    # "got": ``large._pilot``'s answer}, reused by its run's decision instead of a second pilot
    large_pilot: dict | None = None
    # shape fuzzing's state where a failure cut it short under the budget: the sizes left, for shapes-rest
    fuzz_left: dict | None = None
    # shape fuzzing's state while it runs ({"st": ..., "grid": [...]}): what the budget's end keeps (partial)
    fuzz_now: dict | None = None
    # the reference detector's wrong result while it names its cause: what the budget's end keeps (partial)
    reference_now: list | None = None
    # the layout detector's findings while it runs: what the budget's end keeps (partial)
    layout_now: list | None = None
    # the scalars detector's findings while it runs: what the budget's end keeps (partial)
    scalars_now: list | None = None
    # the special-value detector's findings while it runs: what the budget's end keeps (partial)
    special_now: list | None = None
    # the sentinel detector's findings while it runs: what the budget's end keeps (partial)
    sentinel_now: list | None = None
    # the experiments' plain runs by sizes (harness.probe.experiments.outcome)
    outcomes: dict = field(default_factory=dict)

    def wrong(self) -> bool:
        """A result was seen wrong in this process: the diagnosis' reserve counts."""
        return bool(self.failing or self.wrong_now)

    def add_evidence(self, got: dict) -> None:
        self.evidence = {**(self.evidence or {}), **got}

    def to_json(self) -> dict:
        """What the parent gets (the ``seen`` of a ``meta`` event): the fields seen, none of LOCAL."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name not in LOCAL and getattr(self, f.name) is not None}

    @classmethod
    def from_json(cls, data: dict) -> "Blackboard":
        """A worker's ``seen`` (or the parent's merge of several); an unknown key is an error (TypeError)."""
        return cls(**{k: v for k, v in (data or {}).items()})


@dataclass
class Declared:
    """What the probe file declares, as the worker read it once the file was loaded."""

    sizes: dict  # the default sizes
    deterministic: bool | None  # DETERMINISTIC (None: not declared)
    tolerance: tuple | list | None  # (rtol, atol); None: by dtype
    ranges: dict  # name -> [lo, hi]: the sizes shape fuzzing may try


@dataclass
class Meta:
    """A worker's ``meta`` event, the one kind it sends: once the file is loaded, what it declares;
    after each detector, the block sizes the runs saw and the blackboard (cumulative: the last holds
    the others). On the wire the fields are flat: the declared ones, ``blocks``, ``seen``."""

    declared: Declared | None = None
    blocks: list | None = None
    seen: Blackboard | None = None

    def to_json(self) -> dict:
        out = {f.name: getattr(self.declared, f.name) for f in dataclasses.fields(Declared)} if self.declared else {}
        if self.blocks is not None:
            out["blocks"] = self.blocks
        if self.seen is not None:
            out["seen"] = self.seen.to_json()
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Meta":
        """A ``meta`` event's fields (the event's envelope, ``event`` and ``t``, left out); an unknown or a
        partial declaration is an error (TypeError)."""
        data = {k: v for k, v in data.items() if k not in ("event", "t")}
        declared = {f.name: data.pop(f.name) for f in dataclasses.fields(Declared) if f.name in data}
        blocks, seen = data.pop("blocks", None), data.pop("seen", None)
        if data:
            raise TypeError(f"a meta event with unknown fields: {', '.join(sorted(data))}")
        return cls(Declared(**declared) if declared else None, blocks,
                   None if seen is None else Blackboard.from_json(seen))
