"""``python -m harness detect <slug>``: which detectors flag the broken kernel, and stay quiet on the fixed one.

The runs and the records live in ``harness.probe.case_runs``; the checks are the detectors' case checks
(``harness.probe.detectors``, each ``Detector.case``; ``harness.probe.cases`` lists them). This module is the
command line around them.
"""

from __future__ import annotations

from harness.core import table
from harness.probe import cases as D
from harness.probe.case_runs import across, from_case_record, load_record
from harness.errors import UsageError
from harness.options import add_detect_options, add_selection, finish, load_specs, run_detectors
from harness.run.backends import resolve_backends


def _cell(f: dict | None) -> str:
    if not f:
        return ""
    src = f" [{f['source']}]" if f.get("source") else ""
    return f"{f['status']}: {f['reason']}{src}"


def findings_table(rec: dict, cross: dict | None = None, fmt: str = "simple") -> str:
    rows = []
    for det in D.DETECTORS:
        if det.check is None:
            if cross is None:
                continue
            b, f = cross["broken"], cross["fixed"]
        else:
            b = rec["variants"].get("broken", {}).get("findings", {}).get(det.name)
            f = rec["variants"].get("fixed", {}).get("findings", {}).get(det.name)
        outcome = D.outcome((b or {}).get("status", ""), (f or {}).get("status", ""))
        rows.append([det.name, _cell(b), _cell(f), outcome.upper() if "false" in outcome else outcome])
    from tabulate import tabulate  # here, not at the top: lint and --help need only the standard library
    return tabulate(rows, headers=["detector", "broken kernel", "fixed kernel", "outcome"], tablefmt=fmt,
                    maxcolwidths=[None, 60, 60, None], disable_numparse=True)


def run(args) -> int:
    if not args.slugs and not args.all:
        raise UsageError("name a case (python -m harness detect add-missing-mask) or pass --all")
    specs, errors = load_specs(args.slugs, args.all)
    backends = resolve_backends(args.backend)
    results = run_detectors(specs, backends, args, errors)
    payload = []
    for spec in specs:
        recs = results.get(spec.slug, {})
        gpu = recs.get("gpu") or load_record(spec, "gpu") or from_case_record(spec, "gpu")
        interp = recs.get("interpreter") or load_record(spec, "interpreter")
        cross = across(gpu, interp)
        if args.json:
            payload.append({"case": spec.slug, "records": recs, D.ACROSS.name: cross})
            continue
        print(f"\n{spec.slug}: {spec.title}")
        for backend, rec in recs.items():
            print(f"  {'; '.join(table.env_lines([rec['env']])) or backend}")
            print(findings_table(rec, cross if backend == backends[-1] else None))
            caught = [n for n, f in rec["variants"].get("broken", {}).get("findings", {}).items()
                      if f["status"] == D.FLAGGED]
            alarms = [n for n, f in rec["variants"].get("fixed", {}).get("findings", {}).items()
                      if f["status"] == D.FLAGGED]
            print(f"  {backend}: caught by {', '.join(caught) or 'nothing'}"
                  f"; false alarms on the fixed kernel: {', '.join(alarms) or 'none'}")
    if args.json:
        print(table.dumps(payload))
    return finish(errors, all(as_expected(rec) for recs in results.values() for rec in recs.values()))


def as_expected(rec: dict) -> bool:
    """Every variant ran (the harness did not fail) and behaved as its case declares."""
    variants = rec.get("variants", {}).values()
    return bool(variants) and all(v.get("status") != "error" and all(x.get("as_declared") for x in v["verdicts"])
                                  for v in variants)


def register(sub) -> None:
    p = sub.add_parser("detect", help="run every detector on cases: what flags the broken kernel, "
                                      "what stays quiet on the fixed one")
    add_selection(p)
    add_detect_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)
