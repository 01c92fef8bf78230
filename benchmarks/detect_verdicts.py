"""Compare ``detect``'s verdicts row by row: the committed records against fresh runs.

    python -m harness detect --all --backend interpreter --json > before.json   # at the old commit
    python -m harness detect --all --backend interpreter --json > after.json    # at the new one
    python benchmarks/detect_verdicts.py --backend interpreter before.json after.json --out docs/measurements/X.md

Each row is one (case, variant, check): its status (flagged, quiet, n/a, not run) in the committed
record (``cases/<slug>/recorded/detect-<backend>.json``) and in each run given, over the cases every run
given covers. A row is listed where
some status differs; what ``case`` observed (each call's verdict: ``wrong``, ``ok``, ...) is compared
the same way. ``report`` shows these findings as they are, so its cells change exactly where these do.
Reasons are not compared (a check that reads the probe words them otherwise); ``--reasons CHECK`` lists
them for one check beside each other. ``--rejudge IN OUT`` judges the checks that read the probe again,
by the code as it is now, from the probe runs a ``detect --json`` output kept; ``--record-from IN`` writes
the records of a ``detect --json`` output made elsewhere (a GPU machine) as ``detect --record`` would have.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.core import discovery  # noqa: E402
from harness.probe import cases as D  # noqa: E402

ACROSS = D.ACROSS.name


def _recorded(spec, backend: str, at: str | None) -> dict | None:
    """A case's detect record on ``backend``: the file, or as commit ``at`` has it."""
    p = spec.path / "recorded" / f"detect-{backend}.json"
    if at is None:
        return json.loads(p.read_text()) if p.is_file() else None
    import subprocess

    shown = subprocess.run(["git", "show", f"{at}:{p.relative_to(ROOT)}"], cwd=ROOT, capture_output=True, text=True)
    return json.loads(shown.stdout) if shown.returncode == 0 else None


def committed(backend: str, at: str | None = None) -> dict:
    """{slug: record} from the committed detect records (at commit ``at``, else as the files are now), with
    the GPU-against-interpreter finding of the two committed records under ACROSS."""
    from harness.probe.case_runs import across

    out = {}
    for spec in discovery.load_all()[0]:
        if (rec := _recorded(spec, backend, at)) is not None:
            other = _recorded(spec, "gpu" if backend == "interpreter" else "interpreter", at)
            pair = (rec, other) if backend == "gpu" else (other, rec)
            out[spec.slug] = dict(rec, **{ACROSS: across(*pair)})
    return out


def from_run(path: str, backend: str) -> dict:
    """{slug: record} from a ``detect --json`` output; the divergence finding kept under ACROSS."""
    out = {}
    for item in json.loads(Path(path).read_text()):
        rec = item["records"].get(backend)
        if rec is not None:
            out[item["case"]] = dict(rec, **{ACROSS: item.get(ACROSS)})
    return out


def rows_of(rec: dict | None) -> dict:
    """{(variant, what): (status, reason)}: each check's finding and each call's observed verdict."""
    out = {}
    for variant, v in ((rec or {}).get("variants") or {}).items():
        for name, f in (v.get("findings") or {}).items():
            out[(variant, name)] = (f.get("status", ""), f.get("reason", ""))
        for x in v.get("verdicts") or []:
            out[(variant, f"case: call {x['call']}")] = (x["observed"], "declared" if x.get("as_declared")
                                                          else "NOT as declared")
        if (rec or {}).get(ACROSS):
            f = rec[ACROSS][variant]
            out[(variant, ACROSS)] = (f["status"], f["reason"])
    return out


def cell(x) -> str:
    return "-" if x is None else x[0]


def table(labels: list, sources: list, slugs: list) -> tuple[list, dict]:
    """The rows that differ, and per source how many rows it has."""
    diff, n = [], {label: 0 for label in labels}
    for slug in slugs:
        per = [rows_of(s.get(slug)) for s in sources]
        keys = sorted({k for p in per for k in p})
        for k in keys:
            vals = [p.get(k) for p in per]
            for label, v in zip(labels, vals):
                n[label] += v is not None
            if len({cell(v) for v in vals if v is not None}) > 1 or (k[1] != ACROSS and None in vals and
                                                                       any(v is not None for v in vals)):
                diff.append([slug, k[0], k[1]] + [cell(v) for v in vals])
    return diff, n


def counts(sources: list, labels: list, slugs: list, ignore=()) -> list:
    """Per check and source: caught / missed / false alarms, as ``detect`` scores them."""
    out = []
    checks = [d.name for d in D.DETECTORS if d.name not in ignore]
    for name in checks:
        row = [name]
        for s in sources:
            c = {"caught": 0, "missed": 0, "false alarm": 0}
            for slug in slugs:
                r = rows_of(s.get(slug))
                b, f = r.get(("broken", name), ("", ""))[0], r.get(("fixed", name), ("", ""))[0]
                o = D.outcome(b, f)
                for word in c:
                    c[word] += word in o.split(", ") or (word == "caught" and o.startswith("caught"))
            row.append(f"{c['caught']} / {c['missed']} / {c['false alarm']}")
        out.append(row)
    return out


def rejudge(src: str, dst: str) -> None:
    """``src`` (a ``detect --json`` output) with every check that reads the probe judged again, by the code as
    it is now, from the probe runs the output kept (no new run): ``dst``."""
    from types import SimpleNamespace

    from harness.probe.casecheck import Evidence, ProbeCheck, short

    data = json.loads(Path(src).read_text())
    for item in data:
        spec = discovery.load(item["case"])
        for backend, rec in item["records"].items():
            for variant, v in rec["variants"].items():
                if "probe" not in v:
                    continue
                main = SimpleNamespace(status=v.get("status", ""), message=v.get("message", ""),
                                       kernels=v.get("kernels"))  # the main run (its kernels: ProbeCheck.drop)
                ev = Evidence(spec, backend, variant, main, v["probe"])
                for c in D.DETECTORS:
                    if isinstance(c, ProbeCheck) and c.applies(backend) and c.name in v["findings"]:
                        status, why = c.check(ev)
                        v["findings"][c.name] = {"status": status, "reason": short(why)}
    Path(dst).write_text(json.dumps(data))


def record_from(src: str) -> None:
    """Each case's record from ``src`` (a ``detect --json`` output, made elsewhere: on a GPU machine), written
    as ``detect --record`` writes it (merged with the record there: findings not run now keep their old value)."""
    from harness.probe.case_runs import keep

    for item in json.loads(Path(src).read_text()):
        spec = discovery.load(item["case"])
        for rec in item["records"].values():
            keep(spec, rec, True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--rejudge"] and len(argv) == 3:
        rejudge(argv[1], argv[2])
        return 0
    if argv[:1] == ["--record-from"] and len(argv) == 2:
        record_from(argv[1])
        return 0
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                epilog="--rejudge IN.json OUT.json: IN with the checks that read the probe judged "
                                       "again from the probe runs it kept (no run). --record-from IN.json: write "
                                       "the records of IN as detect --record would have")
    p.add_argument("runs", nargs="*", help="detect --json outputs, oldest first (label=path to name one)")
    p.add_argument("--backend", default="interpreter")
    p.add_argument("--at", default=None, metavar="REV", help="the committed records as commit REV has them")
    p.add_argument("--out", default=None, help="write the markdown here (else print it)")
    p.add_argument("--title", default="detect's verdicts: the committed records against fresh runs")
    p.add_argument("--reasons", default=None, metavar="CHECK", help="also list every reason of this check")
    p.add_argument("--note", action="append", default=[], help="a line for the header (command, machine)")
    p.add_argument("--why", default=None, metavar="FILE",
                   help="append this file's text: why each row differs (written by hand, from the reasons)")
    p.add_argument("--ignore", action="append", default=[], metavar="CHECK",
                   help="leave this check's rows out (say why in a --note: a tool not installed here)")
    args = p.parse_args(argv)
    from tabulate import tabulate

    labels, sources = [f"committed{' at ' + args.at if args.at else ''}"], [committed(args.backend, args.at)]
    for r in args.runs:
        label, _, path = r.rpartition("=")
        labels.append(label or Path(path).stem)
        sources.append(from_run(path, args.backend))
    # the cases every run given covers (a run of some cases is compared on those), else every committed one
    slugs = sorted(set.intersection(*[set(s) for s in sources[1:]]) if sources[1:] else set(sources[0]))
    diff, n = table(labels, sources, slugs)
    diff = [r for r in diff if r[2] not in args.ignore]
    lines = [f"# {args.title}", "", *[f"{x}  " for x in args.note], "",
             f"Backend: {args.backend}. Rows per source: "
             + ", ".join(f"{label} {n[label]}" for label in labels) + ". Rows whose status differs: "
             f"{len(diff)}" + (f" (rows of {', '.join(args.ignore)} left out)" if args.ignore else "") + ".", "",
             "## caught / missed / false alarms per check", "",
             tabulate(counts(sources, labels, slugs, args.ignore), headers=["check"] + labels, tablefmt="github"), "",
             "## Rows that differ", ""]
    lines.append(tabulate(diff, headers=["case", "variant", "check"] + labels, tablefmt="github")
                 if diff else "none")
    if args.reasons:
        lines += ["", f"## Every reason of {args.reasons}", ""]
        rows = []
        for slug in slugs:
            for variant in ("broken", "fixed"):
                vals = [rows_of(s.get(slug)).get((variant, args.reasons)) for s in sources]
                rows.append([slug, variant] + [("-" if v is None else f"{v[0]}: {v[1]}").replace("|", "/")
                                               for v in vals])
        lines.append(tabulate(rows, headers=["case", "variant"] + labels, tablefmt="github"))
    if args.why:
        lines += ["", "## Why each row differs (written by hand from the records' reasons)", "",
                  Path(args.why).read_text().strip()]
    text = "\n".join(lines) + "\n"
    if args.out:
        from harness.core import fileio

        fileio.write_text(Path(args.out), text)
        print(f"wrote {args.out}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
