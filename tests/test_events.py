"""harness.core.events: the worker's events read by one parser into dataclasses, and a run's
trials and probes written back exactly as the worker (and every committed record) has them."""

import dataclasses
import json
from pathlib import Path

from harness.core import table
from harness.core.events import PaddingRerun, RunResult, Trial, WorkerError, read_worker_events

ROOT = Path(__file__).resolve().parents[1]

TRIAL = {"trial": 0, "call": 1, "fingerprint": "f", "guard": {"wrote_past_end": {"out": 2}, "unwritten": {}},
         "bench_calls": [3], "close": False, "n": 4, "n_bad": 1, "max_abs": float("inf"), "max_rel": 0.5,
         "nonfinite": 1, "first_bad": 2, "result": "r", "reference": "ref"}


def test_every_event_of_a_worker_is_read_into_its_dataclass():
    events = [{"event": "imported", "t": 1.0},
              {"event": "env", "backend": "interpreter", "device": "cpu", "t": 1.5},
              {"event": "start", "variant": "fixed", "t": 2.0},
              {"event": "launch", "variant": "fixed", "t": 2.1},
              {"event": "compiling", "t": 2.2}, {"event": "compiled", "t": 2.3},
              {"event": "trial", "variant": "fixed", **TRIAL, "t": 2.4},
              {"event": "padding-rerun", "variant": "fixed", "trial": 0, "call": 1, "nonfinite_with_nan_padding": 1,
               "nonfinite_with_finite_padding": 0, "t": 2.5},
              {"event": "kernels", "variant": "fixed", "kernels": [{"name": "k", "shared": 0, "num_warps": 4}]},
              {"event": "finished", "variant": "fixed"},
              {"event": "start", "variant": "broken"},
              {"event": "error", "phase": "launch", "type": "RuntimeError", "message": "boom", "traceback": "tb"}]
    got = read_worker_events(events)
    assert got.env == {"backend": "interpreter", "device": "cpu"}
    assert (got.started, got.finished) == (["fixed", "broken"], ["fixed"])
    assert got.error == WorkerError("launch", "RuntimeError", "boom", "tb")
    fixed = got.of("fixed")
    assert fixed.trials == [Trial(**TRIAL)] and fixed.trials[0].bad
    assert fixed.probes == [PaddingRerun(0, 1, 1, 0)] and fixed.kernels[0]["name"] == "k"
    assert got.of("broken").trials == [] and got.of("broken").kernels is None


def test_a_trial_is_written_back_with_the_keys_and_order_the_worker_wrote():
    assert list(Trial(**TRIAL).to_json().items()) == list(TRIAL.items())
    run = RunResult("s", "broken", "gpu", "done", trials=[TRIAL])
    assert isinstance(run.trials[0], Trial) and run.trials_of_call(1) == run.trials and run.trials_of_call(0) == []


def test_every_committed_recorded_run_reads_and_writes_back_the_same():
    """The recorded runs under cases/*/recorded (and docs/) load into RunResult, Trial and PaddingRerun,
    and strict JSON of them is the file's own (its trials and probes key for key, in order)."""
    fields = {f.name for f in dataclasses.fields(RunResult)}
    seen = 0
    for path in sorted(ROOT.glob("cases/*/recorded/*.json")) + sorted(ROOT.glob("docs/**/*.json")):
        data = json.loads(path.read_text())
        runs = data.get("runs") if isinstance(data, dict) else None
        for raw in runs if isinstance(runs, list) else []:
            run = RunResult(**{k: v for k, v in table.loads(json.dumps(raw)).items() if k in fields})
            back = table.strict(run.to_json())
            assert {k: back[k] for k in raw} == raw, path  # an older record lacks fields added since (kernels)
            assert [list(t) for t in back["trials"] + back["probes"]] == [list(t) for t in raw["trials"] + raw["probes"]]
            seen += 1
    assert seen > 100
