"""``python -m harness report``: every case through every detector, into docs/report.md and report.html."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.core.discovery import REPO_ROOT
from harness.errors import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, UsageError
from harness.options import add_detect_options, load_specs, run_detectors
from harness.report.pages import gather, stale_cases, write_report
from harness.report.records import refresh_line, unreadable
from harness.run.backends import resolve_backends


def run(args) -> int:
    specs, errors = load_specs([], True)
    backends = [] if args.no_run else resolve_backends(args.backend)
    live = run_detectors(specs, backends, args) if backends else {}
    runs = gather(specs, live)
    for e in errors + unreadable(runs):  # malformed folders and records first: reported even when nothing else is
        print(f"error: {e}", file=sys.stderr)
    if not any(r for recs in runs.values() for r in recs.values()):
        raise UsageError("no runs to report: nothing ran here and no case has a recorded run")
    if stale := stale_cases(specs, runs):  # no cell may come from a record older than its kernel
        line = refresh_line(stale, specs)
        if not args.allow_stale:
            print(f"error: {line} (or --allow-stale for a draft with them marked); report not written", file=sys.stderr)
            return EXIT_MISMATCH
        print(f"warning: a draft: {line}", file=sys.stderr)
    for p in write_report(specs, runs, errors, Path(args.out)):
        print(f"wrote {p}")
    return EXIT_USAGE if (errors or unreadable(runs)) and args.strict else EXIT_OK


def out_folder(text: str) -> str:
    """``--out``: a folder named (an empty name would write into the current directory unasked)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty: name the folder for report.md, report.html and report-img/")
    import os

    path = Path(text).absolute()  # checked before anything runs or is judged stale: bad input first
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is not a folder")
    base = next(p for p in (path, *path.parents) if p.exists())
    if not base.is_dir() or not os.access(base, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text}: {base} is not a folder this user can write in")
    return text


def register(sub) -> None:
    p = sub.add_parser("report", help="run every case through every detector and write docs/report.md and .html")
    add_detect_options(p)
    p.add_argument("--no-run", action="store_true", help="run nothing: build the report from recorded runs only")
    p.add_argument("--out", type=out_folder, default=str(REPO_ROOT / "docs"),
                   help="folder for report.md, report.html and report-img/ (default: docs/)")
    p.add_argument("--strict", action="store_true", help="exit 2 when some case folder is malformed")
    p.add_argument("--allow-stale", action="store_true",
                   help="write a draft even when some records are missing or older than the case files "
                        "(their cells marked stale); without it such a report exits 1 and names the refresh")
    p.set_defaults(func=run)
