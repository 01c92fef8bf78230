"""The runs the report is built from, and whether each still describes the kernels as they are.

For each case and backend the report takes this run's record, else the recorded one
(``recorded/detect-<backend>.json``, ``python -m harness detect --record``), else the
behaviour-only one (``recorded/<backend>.json``, ``python -m harness record``); and the
probe's records (``recorded/probe-<backend>.json``, ``python examples/probe_cases.py --record``).

A record keeps the sha256 of the case files it ran on (``sources``). One whose hashes
differ from the files now, or that keeps none, or that is missing, is **stale**: its
cells are not shown as results, and ``report`` stops with the command that refreshes it
(``--allow-stale`` renders a draft with those cells marked).
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


def load_probe(spec, backend: str) -> dict | None:
    try:
        rec = json.loads((spec.path / "recorded" / f"probe-{backend}.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(rec, dict) or not all(isinstance(rec.get(v), list) for v in ("broken", "fixed")):
        return None
    return dict(rec, source=PROBE_SOURCE)


def probe_backends(specs) -> list[str]:
    """The probe's backends in the report: the interpreter, and the GPU once some case has a GPU probe record."""
    gpu = any((s.path / "recorded" / "probe-gpu.json").is_file() for s in specs)
    return [b for b in BACKENDS if b == "interpreter" or gpu]


def _detect_record(spec, b: str, live: dict) -> dict | None:
    from harness.detectors.session import from_case_record, load_record

    rec = live.get(spec.slug, {}).get(b)
    if rec is not None:
        rec["source"] = "this run"
    elif (rec := load_record(spec, b)) is not None:
        rec["source"] = DETECT_SOURCE
    elif (rec := from_case_record(spec, b)) is not None:
        rec["source"] = "recorded by python -m harness record (no detector runs)"
    if rec is not None:
        rec["stale"] = stale_reason(rec, spec, f"detect-{b}") or _predates(rec)
    return rec


def _predates(rec: dict) -> str | None:
    """Why a detect record is stale though its files are not: it predates some detector."""
    from harness.detectors import registry as D

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
            if (rec := load_probe(spec, b)) is not None:
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
            if missing_ok:
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
