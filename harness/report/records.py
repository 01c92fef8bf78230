"""The runs the report is built from, and whether each still describes the kernels as they are.

For each case and backend the report takes this run's record, else the recorded one
(``recorded/detect-<backend>.json``, ``python -m harness detect --record``), else the
behaviour-only one (``recorded/<backend>.json``, ``python -m harness record``); and the
probe's records (``recorded/probe-<backend>.json``, ``python examples/probe_cases.py --record``).

A record keeps the sha256 of the case files it ran on (``sources``). One whose hashes
differ from the files now, or that keeps none, or that is missing, is **stale**: its
cells are not shown as results, and ``report`` stops with the command that refreshes it
(``--allow-stale`` renders a draft with those cells marked).

A record that cannot be read (not JSON, or JSON of another shape) is **unreadable**: its
cells say "unreadable record: why", the command names it as an error line, and every
other case is reported as usual.
"""

from __future__ import annotations

import json

from harness.core.recorded import stale_files
from harness.core.spec import BACKENDS

STALE = "stale"
PROBE = "probe-"  # runs[slug]["probe-interpreter"]: the probe's record on that backend
DETECT_SOURCE = "recorded by python -m harness detect --record"
PROBE_SOURCE = "recorded by python examples/probe_cases.py --record"


def probe_skip(spec, backend: str) -> str | None:
    """Why the probe does not run ``spec`` on ``backend`` (its records are not needed), or None."""
    if spec.expect[backend][0] == "skip":
        return f"the case does not run on this backend: {spec.skip_reason.get(backend) or 'skip'}"
    if backend == "gpu" and spec.gpus > 1 and not (spec.path / "recorded" / "probe-gpu.json").is_file():
        return (f"it needs {spec.gpus} GPUs (case.toml [run] gpus = {spec.gpus}), and no probe record comes "
                f"from a machine with {spec.gpus}")
    return None


def stale_reason(rec: dict | None, spec, what: str) -> str | None:
    """Why ``rec`` cannot be shown as a result: missing, no hashes, or files changed since; None if fresh."""
    if rec is None:
        return f"no {what} record"
    if rec.get("source") == "this run":
        return None
    changed = stale_files(rec.get("sources"), spec.path)
    if changed is None:
        return f"the {what} record keeps no hashes of the case files it ran on"
    if changed:
        return f"{', '.join(changed)} changed since the {what} record"
    return None


def _read(path) -> tuple[object, str | None]:
    """A record's JSON, or why it cannot be read."""
    try:
        return json.loads(path.read_bytes().decode("utf-8")), None
    except OSError as e:
        return None, f"cannot be read ({e.strerror or e})"
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 text (byte {e.start})"
    except ValueError as e:
        return None, f"not JSON ({' '.join(str(e).split())})"


def _all(items, typ) -> bool:
    return isinstance(items, list) and all(isinstance(x, typ) for x in items)


def _variant_problem(name: str, v) -> str | None:
    """What in one variant of a detect record the report cannot read, or None."""
    if not isinstance(v, dict):
        return f"variants.{name} is {type(v).__name__}, not an object"
    findings = v.get("findings", {})
    if not isinstance(findings, dict) or not all(isinstance(f, dict) and isinstance(f.get("status"), str)
                                                 and isinstance(f.get("reason"), str) for f in findings.values()):
        return f"variants.{name}.findings is not an object of findings with a status and a reason"
    verdicts = v.get("verdicts", [])
    if not _all(verdicts, dict) or not all(isinstance(x.get("observed"), str) and isinstance(x.get("as_declared"), bool)
                                           and isinstance(x.get("call"), int) for x in verdicts):
        return f"variants.{name}.verdicts is not a list of verdicts (call, observed, as_declared)"
    if not _all(v.get("trials", []), dict) or not all(isinstance(t.get("call"), int) for t in v.get("trials", [])):
        return f"variants.{name}.trials is not a list of trials with a call"
    if not _all(v.get("profiles", []), dict):
        return f"variants.{name}.profiles is not a list of objects"
    return None


def record_problem(rec, kind: str) -> str | None:
    """What in a record the report cannot read (``kind``: "detect" or "probe"), or None when it reads."""
    if not isinstance(rec, dict):
        return f"a JSON {type(rec).__name__}, not an object"
    if not isinstance(rec.get("env", {}), dict):
        return "env is not an object"
    if kind == "probe":
        bad = [v for v in ("broken", "fixed") if not _all(rec.get(v), dict)]
        return f"'{bad[0]}' is not a list of findings" if bad else None
    if not isinstance(rec.get("variants"), dict):
        return "'variants' is not an object"
    return next((p for name, v in rec["variants"].items() if (p := _variant_problem(name, v))), None)


def _load(path, kind: str) -> dict | None:
    """The record at ``path``; None when there is none; an unreadable one marked, with why."""
    if not path.is_file():
        return None
    rec, why = _read(path)
    why = why or record_problem(rec, kind)
    return rec if why is None else _unreadable(path, kind, why)


def _unreadable(path, kind: str, why: str) -> dict:
    """The stand-in for a record that cannot be read: no runs, and why in every cell."""
    where = f"{path.parent.parent.name}/recorded/{path.name}"
    empty = {"variants": {}} if kind == "detect" else {"broken": [], "fixed": []}
    return {**empty, "unreadable": f"{where}: unreadable record: {why}", "stale": f"unreadable record: {why}"}


def _from_case_record(spec, b: str) -> dict | None:
    """A detect record made from ``recorded/<b>.json`` (``harness record``'s), or that file marked unreadable."""
    from harness.probe.case_runs import from_case_record

    from harness.core.recorded import torn

    path = spec.path / "recorded" / f"{b}.json"
    if not path.is_file():
        return None
    if why := torn(spec.path, b):
        return _unreadable(path, "detect", why)
    try:
        rec = from_case_record(spec, b)
    except Exception as e:  # a record of another shape: one cell, not a failed report
        return _unreadable(path, "detect", f"{type(e).__name__}: {e}")
    if rec is None:
        return _unreadable(path, "detect", _read(path)[1] or "no runs of python -m harness record in it")
    why = record_problem(rec, "detect")
    return _unreadable(path, "detect", why) if why else dict(rec, source="recorded by python -m harness record "
                                                                          "(no detector runs)")


def load_probe(spec, backend: str) -> dict | None:
    rec = _load(spec.path / "recorded" / f"probe-{backend}.json", "probe")
    return rec if rec is None or rec.get("unreadable") else dict(rec, source=PROBE_SOURCE)


def unreadable(runs: dict) -> list[str]:
    """One line for each record that cannot be read: its path and why."""
    return [rec["unreadable"] for recs in runs.values() for rec in recs.values() if rec and rec.get("unreadable")]


def probe_backends(specs) -> list[str]:
    """The probe's backends in the report: the interpreter, and the GPU once some case has a GPU probe record."""
    gpu = any((s.path / "recorded" / "probe-gpu.json").is_file() for s in specs)
    return [b for b in BACKENDS if b == "interpreter" or gpu]


def _detect_record(spec, b: str, live: dict) -> dict | None:
    from harness.probe.case_runs import record_path

    rec = live.get(spec.slug, {}).get(b)
    if rec is not None:
        rec["source"] = "this run"
    elif (rec := _load(record_path(spec, b), "detect")) is not None:
        if not rec.get("unreadable"):
            rec["source"] = DETECT_SOURCE
    else:
        rec = _from_case_record(spec, b)
    if rec is not None and not rec.get("unreadable"):
        rec["stale"] = stale_reason(rec, spec, f"detect-{b}") or _predates(rec)
    return rec


def _predates(rec: dict) -> str | None:
    """Why a detect record is stale though its files are not: it predates some detector."""
    from harness.probe import cases as D

    have = set.intersection(*([set((v or {}).get("findings", {})) for v in rec.get("variants", {}).values()]
                              or [set()]))
    missing = [d.name for d in D.DETECTORS if d.check is not None and d.name not in have]
    return f"the record predates the detector{'s' if len(missing) > 1 else ''} {', '.join(missing)}" if missing else None


def gather(specs, live: dict) -> dict:
    """{slug: {backend: record or None, "probe-<backend>": probe record or None}}, each record with its
    'source' and 'stale' (why it is stale, or None)."""
    probes = probe_backends(specs)
    out = {}
    for spec in specs:
        recs = {b: _detect_record(spec, b, live) for b in BACKENDS}
        for b in probes:
            if (rec := load_probe(spec, b)) is not None and not rec.get("unreadable"):
                rec["stale"] = stale_reason(rec, spec, f"probe-{b}")
            recs[PROBE + b] = rec
        out[spec.slug] = recs
    return out


def stale_cases(specs, runs: dict) -> dict[str, list[str]]:
    """{refresh command kind: [slugs]}: "detect-gpu", "detect-interpreter", "probe-interpreter", ..."""
    out: dict[str, list[str]] = {}
    for spec in specs:
        recs = runs[spec.slug]
        for key, rec in recs.items():
            missing_ok = key.startswith(PROBE) and probe_skip(spec, key.removeprefix(PROBE))
            if missing_ok or (rec and rec.get("unreadable")):  # named as an error of its own, not a refresh
                continue
            if rec is None or rec.get("stale"):
                kind = key if key.startswith(PROBE) else f"detect-{key}"
                out.setdefault(kind, []).append(spec.slug)
    return out


def refresh_line(stale: dict[str, list[str]], specs) -> str:
    """One line: the stale cases, and the commands that refresh them (``--all`` where that is every case)."""
    cases = sorted({s for slugs in stale.values() for s in slugs})
    cmds = []
    for kind, slugs in sorted(stale.items()):
        if kind.startswith(PROBE):
            every = [s.slug for s in specs if not probe_skip(s, kind.removeprefix(PROBE))]
            which = "" if sorted(slugs) == sorted(every) else " " + " ".join(slugs)
            flag = " --backend gpu" if kind == PROBE + "gpu" else ""  # the script probes the interpreter by default
            cmds.append(f"python examples/probe_cases.py --record{flag}{which}")
        else:
            which = "--all" if len(slugs) == len(specs) else " ".join(slugs)
            cmds.append(f"python -m harness detect {which} --backend {kind.removeprefix('detect-')} --record")
    return (f"{len(cases)} cases have stale or missing records ({', '.join(cases)}); refresh them with: "
            + "; ".join(cmds))
