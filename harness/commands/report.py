"""``python -m harness report``: every case through every detector, into docs/report.md and report.html."""

from __future__ import annotations

import sys
from pathlib import Path

from harness.commands.detect import add_detect_options, run_detectors
from harness.core.discovery import REPO_ROOT
from harness.errors import EXIT_OK, EXIT_USAGE, UsageError
from harness.options import load_specs
from harness.report.pages import gather, write_report
from harness.run.backends import resolve_backends


def run(args) -> int:
    specs, errors = load_specs([], True)
    backends = [] if args.no_run else resolve_backends(args.backend)
    live = run_detectors(specs, backends, args) if backends else {}
    runs = gather(specs, live)
    for e in errors:  # malformed folders first: they are reported even when nothing else can be
        print(f"error: {e}", file=sys.stderr)
    if not any(r for recs in runs.values() for r in recs.values()):
        raise UsageError("no runs to report: nothing ran here and no case has a recorded run")
    for p in write_report(specs, runs, errors, Path(args.out)):
        print(f"wrote {p}")
    return EXIT_USAGE if errors and args.strict else EXIT_OK


def register(sub) -> None:
    p = sub.add_parser("report", help="run every case through every detector and write docs/report.md and .html")
    add_detect_options(p)
    p.add_argument("--no-run", action="store_true", help="run nothing: build the report from recorded runs only")
    p.add_argument("--out", default=str(REPO_ROOT / "docs"),
                   help="folder for report.md, report.html and report-img/ (default: docs/)")
    p.add_argument("--strict", action="store_true", help="exit 2 when some case folder is malformed")
    p.set_defaults(func=run)
