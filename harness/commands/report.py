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
from harness.run.backends import cuda_available, resolve_backends


def run(args) -> int:
    specs, errors = load_specs([], True)
    backends = [] if args.no_run else resolve_backends(args.backend)
    gpu_here = "gpu" in backends or cuda_available()
    # Before any kernel runs: the records this run will not replace, and which of them this machine could refresh.
    recorded = gather(specs, {})
    stale = {k: v for k, v in stale_cases(specs, recorded).items() if k.removeprefix("detect-") not in backends}
    here = {k: v for k, v in stale.items() if gpu_here or not k.endswith("-gpu")}
    if here and not args.allow_stale:
        for e in errors + unreadable(recorded):
            print(f"error: {e}", file=sys.stderr)
        print(f"error: {short_line(here, specs, args.verbose)} (or --allow-stale for a draft with them marked); "
              "report not written", file=sys.stderr)
        return EXIT_MISMATCH
    live = run_detectors(specs, backends, args) if backends else {}
    runs = gather(specs, live)
    for e in errors + unreadable(runs):  # malformed folders and records first: reported even when nothing else is
        print(f"error: {e}", file=sys.stderr)
    if not any(r for recs in runs.values() for r in recs.values()):
        raise UsageError("no runs to report: nothing ran here and no case has a recorded run")
    if stale := stale_cases(specs, runs):  # no cell may come from a record older than its kernel unmarked
        why = "" if any(k in here for k in stale) else " (they need a GPU, and there is none here)"
        print(f"warning: a draft, their cells marked stale{why}: {short_line(stale, specs, args.verbose)}",
              file=sys.stderr)
    for p in write_report(specs, runs, errors, Path(args.out)):
        print(f"wrote {p}")
    return EXIT_USAGE if (errors or unreadable(runs)) and args.strict else EXIT_OK


def short_line(stale: dict[str, list[str]], specs, verbose: bool) -> str:
    """The stale records in one short line: how many cases, which records, a few names; the whole
    list and the refresh commands with ``--verbose``."""
    if verbose:
        return refresh_line(stale, specs)
    cases = sorted({s for slugs in stale.values() for s in slugs})
    names = ", ".join(cases[:3]) + (f" and {len(cases) - 3} more" if len(cases) > 3 else "")
    return (f"{len(cases)} cases have stale or missing records ({names}; records: {', '.join(sorted(stale))}); "
            "--verbose names them all and the commands that refresh them")


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
                   help="write a draft even when some records this machine could refresh are missing or older "
                        "than the case files (their cells marked stale); without it such a report exits 1 before "
                        "running anything. GPU records on a machine without a GPU are used when still valid and "
                        "marked stale otherwise, with or without it")
    for action in p._actions:
        if action.dest == "verbose":
            action.help = "print each run as it finishes, and every stale record with the commands that refresh it"
    p.set_defaults(func=run)
