"""``python -m harness detect <slug>``: the runs behind the detectors' case checks, and their records.

For each (case, backend, variant) it runs

1. the main run, exactly as ``python -m harness case`` does (the case's trials, sizes
   and calls), saving the broken kernel's first outputs for the error map;
2. the probe on the case folder (``probe_run``): the variant's file with ``case.py`` as its
   inputs, as ``examples/probe_cases.py`` probes it, with the probe's detectors that the
   checks reading the probe (``casecheck.ProbeCheck``) name, in one process, with no budget;
   a check whose main run shows nothing for its detectors to check (``ProbeCheck.drop``: no
   shared memory for racecheck and ConSan) leaves them out.

Then ``harness.probe.cases`` judges the evidence.

``--record`` writes ``cases/<slug>/recorded/detect-<backend>.json``; ``harness.report``
reads those for a backend it cannot run (the GPU, on a laptop). Each record keeps
``sources``, the sha256 of the case files as they were when the runs began
(``harness.core.recorded.source_hashes``): the report calls a record whose files changed
since stale. A detector that could not run this time (``not run``) keeps its finding
from the previous record, marked with that record's date and device, when that record
ran on the same files.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from harness.core import fileio, table
from harness.core.recorded import source_hashes
from harness.probe import cases as R
from harness.probe.casecheck import NOT_RUN, Evidence, ProbeCheck
from harness.errors import UsageError, error_line
from harness.run.timings import purpose_of

PROBE_TIMEOUT = 240  # the most seconds each of the probe's detectors has on a case (a sanitizer is slow to start)
TRIAL_KEYS = ("trial", "call", "close", "n", "n_bad", "max_abs", "max_rel", "nonfinite", "result", "reference",
              "fingerprint", "guard", "bench_calls")


def _profiles(spec, folder: Path) -> list[dict]:
    import torch

    from harness.core.profile import error_profile

    out = []
    for f in sorted(folder.glob("call*.pt")):
        try:
            saved = torch.load(f, map_location="cpu")
            prof = error_profile(saved["out"], saved["ref"], spec.rtol, spec.atol)
        except Exception as e:  # a picture is never worth a failed run
            print(f"warning: {spec.slug}: no error map from {f.name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        if prof is not None:
            prof["call"] = int(f.stem.removeprefix("call"))
            out.append(prof)
    return out


def _compact(t) -> dict:
    """A trial as the detect record keeps it: TRIAL_KEYS, and autotune's launches summed."""
    full = t.to_json()
    c = {k: full[k] for k in TRIAL_KEYS}
    c["bench_calls"] = [sum(t.bench_calls)] if t.bench_calls else []
    return c


def variant_record(spec, run, profiles: list, skip: frozenset = frozenset(), probe=None) -> dict:
    """What one variant did on one backend, and what each detector said: JSON for the record
    (``probe``: ``probe_run``'s, kept whole: the checks that read it say why from it)."""
    from harness.core.verdict import judge

    ev = Evidence(spec, run.backend, run.variant, run, probe)
    rec = {"status": run.status, "message": run.message, "env": run.env,
           "verdicts": [v.to_json() for v in judge(spec, run)],
           "trials": [_compact(t) for t in run.trials], "probes": [p.to_json() for p in run.probes],
           "findings": {k: f.to_json() for k, f in R.evaluate(ev, skip).items()},
           "profiles": profiles, "kernels": run.kernels}
    if probe is not None:
        rec["probe"] = probe
    return rec


def probe_detectors(backend: str, skip: frozenset = frozenset(), run=None) -> list[str]:
    """The probe's detectors that the checks reading the probe need on ``backend`` (those not
    skipped, nor dropped by their check for the variant's main run ``run``: ``ProbeCheck.drop``),
    in the registry's order."""
    from harness.probe.detectors import registry

    wanted = {d for c in R.DETECTORS if isinstance(c, ProbeCheck) and c.applies(backend) and c.name not in skip
              and (run is None or c.drop(run) is None) for d in c.reads}
    return [n for n in registry() if n in wanted]


PROBE_KEYS = ("code", "detector", "severity", "message", "line")  # what a record keeps of a probe finding


def probe_run(spec, variant: str, backend: str, names: list[str], *, seed: int, kernels=None) -> dict | str:
    """The probe's ``names`` on one variant of the case folder on ``backend``, as a record keeps it:
    {"detectors", "ran": {detector: how its run ended}, "findings": [...], "seconds"}, or why it was
    not run ("not run: ..." / "n/a: ..."). One process (``jobs=1``), no budget (a loaded machine
    must not cut a detector short), each detector given the case's timeout (at most PROBE_TIMEOUT).
    ``kernels``: the main run's compiled kernels, the only ones a GPU tool checks (``tool_kernels``)."""
    from harness.probe.runner import ProbeInputError, probe

    only = [k["name"] for k in kernels or [] if k.get("name")]  # kernel_filter keeps the real names
    try:
        rep = probe(str(spec.path / f"{variant}.py"), inputs=str(spec.path / "case.py"), launcher=spec.launcher,
                    backends=[backend], detectors=list(names), seed=seed, jobs=1, budget=0,
                    timeout=min(spec.timeout[backend], PROBE_TIMEOUT), options={"tool_kernels": only} if only else None)
    except ProbeInputError as e:
        return f"not run: the probe could not load the case: {e}"
    except Exception as e:  # the probe's own failure costs the checks that read it, not the variant's record
        return f"not run: the probe failed: {type(e).__name__}: {e}"
    if why := (rep.meta.get(backend) or {}).get("unavailable"):
        return f"n/a: {why}"
    return {"detectors": list(names), "ran": {d: st for b, d, _, st in rep.ran if b == backend},
            "findings": [{k: v for k, v in f.to_json().items() if k in PROBE_KEYS and v not in (None, "")}
                         for f in rep.findings], "seconds": round(rep.seconds, 1)}


def failed_record(message: str) -> dict:
    """A variant the harness itself could not run: every detector 'not run', one line why."""
    return {"status": "error", "message": message, "env": {}, "verdicts": [], "trials": [], "probes": [],
            "findings": {d.name: {"status": NOT_RUN, "reason": message} for d in R.DETECTORS if d.check is not None},
            "profiles": []}


def main_run(spec, backend: str, variant: str, *, trials, seed: int):
    """The run ``python -m harness case`` makes, and the broken kernel's error maps."""
    from harness.run.isolate import run_isolated

    n = trials or spec.trials[backend]
    with tempfile.TemporaryDirectory(prefix="casebook-detect-") as tmp:
        save = tmp if variant == "broken" else None
        run = run_isolated(spec, variant, backend, trials=n, seed=seed, save=save)
        profiles = _profiles(spec, Path(tmp)) if save else []
    return run, profiles


def finish(spec, backend: str, run, profiles: list, *, seed: int, skip: frozenset = frozenset()) -> dict:
    """The probe after the main run, then every detector's finding."""
    return variant_record(spec, run, profiles, skip, _probe(spec, backend, run, seed, skip))


def _probe(spec, backend: str, run, seed: int, skip: frozenset):
    """``probe_run`` after the main run, where some check reads it (else None); why not, where the
    main run shows there is nothing to probe."""
    if not (names := probe_detectors(backend, skip, run)):
        return None
    if run.status == "skip":
        return f"n/a: {run.message}"
    if run.status == "hang":
        return "n/a: the kernel hangs (its main run timed out), so there is no probe run to make"
    if run.status == "error":
        return f"not run: the case failed to set up ({run.message})"
    with purpose_of("probe"):  # for CASEBOOK_TIMINGS: whose run this is
        return probe_run(spec, run.variant, backend, names, seed=seed, kernels=run.kernels)


def _one_line(e: Exception) -> str:
    return f"harness error: {error_line(e)}"


def detect_cases(specs, backends, *, trials=None, seed=0, jobs=2, gpu_jobs=2, skip=frozenset(),
                 progress=None, on_done=None) -> dict:
    """Every (case, backend, variant) through every detector: {slug: {backend: record}}.

    At most ``gpu_jobs`` main GPU runs go at once; interpreter runs and the probe's runs
    on the case folder (its GPU tools mostly CPU-bound) share ``jobs`` other workers, and
    start as soon as their main run is done. One failing case never stops the others.
    ``on_done(spec, record)`` sees each (case, backend) as soon as both its variants
    are done (to write it at once) and returns the record to keep.
    """
    tasks = [(s, b, v) for s in specs for b in backends for v in ("broken", "fixed")]
    sources = {s.slug: source_hashes(s.path) for s in specs}  # the files as they were when the runs began
    out: dict = {}

    def done(i: int, rec: dict) -> None:
        spec, backend, variant = tasks[i]
        case = out.setdefault(spec.slug, {}).setdefault(backend, {
            "case": spec.slug, "backend": backend, "env": {}, "sources": sources[spec.slug], "variants": {},
            "command": f"python -m harness detect {spec.slug} --backend {backend}"
                       + (f" --trials {trials}" if trials else "") + f" --seed {seed}"})
        case["variants"][variant] = rec
        case["env"] = case["env"] or rec.get("env", {})
        if progress:
            progress(f"{spec.slug} {variant} on {backend}: {rec['status']}")
        if on_done and len(case["variants"]) == 2:
            try:
                out[spec.slug][backend] = on_done(spec, case)
            except Exception as e:
                print(f"error: {spec.slug}: {_one_line(e)}", file=sys.stderr)

    from harness.run.isolate import side_by_side

    with side_by_side(min(len(tasks), max(1, jobs) + (max(1, gpu_jobs) if "gpu" in backends else 0))), \
            ThreadPoolExecutor(max_workers=max(1, gpu_jobs)) as gpu_pool, \
            ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        mains = {(gpu_pool if b == "gpu" else pool).submit(main_run, s, b, v, trials=trials, seed=seed): i
                 for i, (s, b, v) in enumerate(tasks)}
        finishing = {}
        for fut in as_completed(mains):
            i = mains[fut]
            spec, backend, _ = tasks[i]
            try:
                run, profiles = fut.result()
            except UsageError:  # a broken environment (torch cannot be imported): bad input for the command
                raise
            except Exception as e:
                done(i, failed_record(_one_line(e)))
                continue
            finishing[pool.submit(finish, spec, backend, run, profiles, seed=seed, skip=skip)] = i
        for fut in as_completed(finishing):
            try:
                rec = fut.result()
            except UsageError:
                raise
            except Exception as e:
                rec = failed_record(_one_line(e))
            done(finishing[fut], rec)
    return out


# --- records -------------------------------------------------------------------------------

def record_path(spec, backend: str) -> Path:
    return spec.path / "recorded" / f"detect-{backend}.json"


def load_record(spec, backend: str) -> dict | None:
    p = record_path(spec, backend)
    try:
        rec = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) and isinstance(rec.get("variants"), dict) else None


def env_label(env: dict) -> str:
    return f"{env.get('date', '?')}, {env.get('device', '?')}"


def merge_recorded(new: dict, old: dict | None) -> dict:
    """Keep the old record's finding wherever a detector could not run this time."""
    if not old or old.get("sources") != new.get("sources"):  # findings of other kernels are not kept
        return new
    source = f"recorded {env_label(old.get('env', {}))}"
    for variant, rec in new["variants"].items():
        old_f = old["variants"].get(variant, {}).get("findings", {})
        for name, f in rec.get("findings", {}).items():
            prev = old_f.get(name)
            if f["status"] == NOT_RUN and prev and prev.get("status") != NOT_RUN:
                rec["findings"][name] = {**prev, "source": prev.get("source") or source}
    return new


def write_record(spec, rec: dict) -> Path:
    p = record_path(spec, rec["backend"])
    p.parent.mkdir(exist_ok=True)
    return fileio.write_text(p, table.dumps(rec) + "\n")


def keep(spec, rec: dict, record: bool) -> dict:
    """A finished (case, backend), as this run found it. With ``record``, it is merged with
    the previous record (findings that could not run now keep their old value, marked
    with its date and device) and written; what is shown is always this run's own."""
    if record:
        merged = merge_recorded(copy.deepcopy(rec), load_record(spec, rec["backend"]))
        print(f"wrote {write_record(spec, merged).relative_to(spec.path.parent.parent)}", file=sys.stderr)
    return rec


def from_case_record(spec, backend: str) -> dict | None:
    """A detection record built from ``recorded/<backend>.json`` (``harness record``'s output).

    The detectors that read the main run's events get their findings; the rest say
    'not run'. Better than nothing for a GPU run that predates ``detect --record``.
    """
    from harness.core.events import RunResult

    try:
        data = json.loads((spec.path / "recorded" / f"{backend}.json").read_text())
    except (OSError, ValueError):
        return None
    fields = {f.name for f in dataclasses.fields(RunResult)}
    out = {"case": spec.slug, "backend": backend, "env": {}, "variants": {}, "command": data.get("command", "")}
    try:
        for r in data.get("runs", []):
            run = RunResult(**{k: v for k, v in r.items() if k in fields})
            why = "not run: not in this recorded run (python -m harness detect --record)"
            out["variants"][run.variant] = variant_record(spec, run, [], probe=why if probe_detectors(backend) else None)
            out["env"] = out["env"] or run.env
    except (TypeError, KeyError):
        return None
    return out if out["variants"] else None


def across(gpu: dict | None, interp: dict | None) -> dict:
    """The GPU-against-interpreter finding for each variant (``R.ACROSS``'s)."""
    out = {}
    for variant in ("broken", "fixed"):
        g = (gpu or {}).get("variants", {}).get(variant, {}).get("verdicts")
        i = (interp or {}).get("variants", {}).get(variant, {}).get("verdicts")
        status, reason = R.compare_backends(g, i)
        out[variant] = {"status": status, "reason": reason}
    return out
