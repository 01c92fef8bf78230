"""The report's probe cells of the cases' probe records, as a commit has them against the files now, cell by cell.

    python benchmarks/probe_cells.py interpreter HEAD        # after python examples/probe_cases.py --record
    python benchmarks/probe_cells.py gpu HEAD --out docs/measurements/X.md

For every case and every probe column of the report (``harness.report.columns.PROBE_COLUMNS``) on the backend,
each variant's cell (its status: flagged, quiet, n/a, not run, stale) is computed by the report's code as it is
now from ``cases/<slug>/recorded/probe-<backend>.json`` at COMMIT (read with ``git show``) and from the file in
the working tree; a row is printed where the status differs, with both reasons. ``--same-reading`` also lists
the cells whose status is the same but whose reason differs (a finding's words or count); ``--findings-only`` reads
both records by their findings alone (no columns' ``since``, no list of what ran: as the report read every record
before those), so a row says what the new record found differently, not what the report reads from a record's
age or its list. The report shows these
cells as they are, so its probe cells change exactly where these do.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.core import discovery  # noqa: E402
from harness.report import columns  # noqa: E402
from harness.report.records import PROBE  # noqa: E402

VARIANTS = ("broken", "fixed")


def at_commit(spec, backend: str, commit: str) -> dict | None:
    path = (spec.path / "recorded" / f"probe-{backend}.json").relative_to(ROOT)
    shown = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, text=True)
    return json.loads(shown.stdout) if shown.returncode == 0 else None


def now(spec, backend: str) -> dict | None:
    p = spec.path / "recorded" / f"probe-{backend}.json"
    return json.loads(p.read_text()) if p.is_file() else None


def cells(spec, rec: dict | None, backend: str, dated: bool = True, listed: bool = True) -> dict:
    """{(column, variant): cell} of one record, by the report's code (a record's staleness by its files is the
    report's other question: not asked here); ``dated=False``: without the columns' ``since`` (a record that
    lists no detectors read as it was before the report judged records by their date); ``listed=False``: without
    the record's list of what ran (its findings alone, as the report read every record before that list)."""
    out = {}
    if rec is not None and not listed:
        rec = {k: v for k, v in rec.items() if k != "ran"}
    for col in columns.PROBE_COLUMNS:
        if col.where not in ("both", backend):
            continue
        col = col if dated else replace(col, since=())
        for v in VARIANTS:
            out[(col.name, v)] = columns.cell(spec, {PROBE + backend: rec} if rec else {}, col, backend, v)
    return out


def changed(before: dict, after: dict, reasons: bool) -> list:
    """[(column, variant, before cell, after cell)] where the status (or, with ``reasons``, the reason) differs."""
    return [(c, v, before[(c, v)], after[(c, v)]) for c, v in before
            if before[(c, v)]["status"] != after[(c, v)]["status"]
            or (reasons and before[(c, v)]["reason"] != after[(c, v)]["reason"])]


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("backend", choices=["interpreter", "gpu"])
    p.add_argument("commit", help="the records before (a commit)")
    p.add_argument("--same-reading", action="store_true", help="also the cells whose reason alone differs")
    p.add_argument("--findings-only", action="store_true",
                   help="read both records by their findings alone (no columns' since, no list of what ran): what "
                        "the new record found differently, not what the report now reads from its age or its list")
    args = p.parse_args(argv)
    if subprocess.run(["git", "rev-parse", "--verify", "--quiet", args.commit + "^{commit}"], cwd=ROOT,
                      capture_output=True).returncode:
        print(f"error: {args.commit}: no such commit", file=sys.stderr)
        return 2
    rows, n = [], 0
    for spec in discovery.load_all()[0]:
        old, new = at_commit(spec, args.backend, args.commit), now(spec, args.backend)
        if old is None and new is None:
            continue
        plain = not args.findings_only
        a = cells(spec, old, args.backend, dated=plain, listed=plain)
        b = cells(spec, new, args.backend, dated=plain, listed=plain)
        n += len(a)
        rows += [(spec.slug, *x) for x in changed(a, b, args.same_reading)]
    print(f"{n} cells, {len(rows)} differ" + (" (status or reason)" if args.same_reading else " in status"))
    print("| case | column | variant | before | after |\n|---|---|---|---|---|")
    for slug, col, v, x, y in rows:
        cell = [slug, col, v, f"{x['status']}: {x['reason']}", f"{y['status']}: {y['reason']}"]
        print("| " + " | ".join(c.replace("|", "/") for c in cell) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
