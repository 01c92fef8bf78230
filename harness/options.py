"""Command-line options and case selection shared by the commands.

Only ``harness.commands`` and ``harness.cli`` import this module. What two commands share
lives here, not in one of them (no command imports another): ``detect`` and ``report``
both run every detector with ``add_detect_options`` and ``run_detectors``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from harness.core import discovery
from harness.core.spec import SpecError
from harness.errors import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, UsageError
from harness.probe import cases as D
from harness.probe.case_runs import detect_cases, keep
from harness.run.scheduler import default_gpu_jobs

MAX_SEED = 2**63 - 1  # torch.Generator.manual_seed takes a signed 64-bit seed


MAX_COUNT = 10**6  # the most trials, jobs or sizes tried an option may ask for: past it a command never ends
MAX_TRIALS = 1000  # as case.toml's [run] trials


def whole(top: int = MAX_COUNT, low: int = 1, shown: str | None = None):
    """An argparse type: a whole number from ``low`` to ``top`` (``shown``: how to write ``top``)."""
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
        if not low <= n <= top:
            raise argparse.ArgumentTypeError(f"must be from {low} to {shown or top}, got {n}")
        return n
    return parse


positive_int = whole()
seed = whole(MAX_SEED, 0, "2**63-1")  # torch.Generator.manual_seed takes a signed 64-bit seed


def seconds(text: str) -> float:
    """A timeout: a finite number of seconds above 0 (nan, inf, 0 and negatives are refused)."""
    import math

    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds") from None
    if not math.isfinite(x) or x <= 0 or x > 1e6:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0 and at most 1e6, got {text}")
    return x


def add_selection(p: argparse.ArgumentParser, what: str = "every case") -> None:
    """The slugs a command works on, or --all."""
    p.add_argument("slugs", nargs="*", metavar="slug")
    p.add_argument("--all", action="store_true", help=what)


def add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=["gpu", "interpreter", "all"], default="all",
                   help="where to run (default: the GPU if there is one, and the interpreter)")
    p.add_argument("--trials", type=whole(MAX_TRIALS), default=None,
                   help="runs per variant (default: the case's [run] trials)")
    p.add_argument("--seed", type=seed, default=0, help="seed for the inputs (default 0)")
    p.add_argument("--jobs", type=positive_int, default=2, help="interpreter processes at once (default 2)")


def load_specs(slugs: list[str], all_cases: bool):
    """The specs named (or all); unknown cases are UsageErrors, malformed ones error lines."""
    if all_cases and slugs:
        raise UsageError(f"name cases or pass --all, not both (got --all and {', '.join(slugs[:3])})")
    if all_cases or not slugs:
        specs, errors = discovery.load_all()
        if not specs and not errors:
            raise UsageError(f"no cases found under {discovery.cases_dir()}")
        return specs, errors
    specs, errors = [], []
    for s in slugs:
        try:
            specs.append(discovery.load(s))
        except discovery.UnknownCase as e:
            raise UsageError(str(e)) from None
        except SpecError as e:
            errors.append(str(e))
    return specs, errors


def finish(errors: list[str], ok: bool) -> int:
    """The end of a command over cases: one line per malformed case, then the exit status
    (2 when a case could not be read, else 0 when everything behaved as declared, else 1)."""
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    if errors:
        return EXIT_USAGE
    return EXIT_OK if ok else EXIT_MISMATCH


# ---------------------------------------------------------------- detect and report: every detector on cases


def detector_names(text: str) -> frozenset:
    names = frozenset(n.strip() for n in text.split(",") if n.strip())
    unknown = sorted(names - set(D.BY_NAME))
    if unknown:
        raise argparse.ArgumentTypeError(f"no detector {', '.join(unknown)} (there are {', '.join(D.BY_NAME)})")
    return names


def run_detectors(specs, backends, args, errors: list | None = None) -> dict:
    """detect_cases with the command line's options, timed on stderr. A record ``--record`` could
    not write is a line in ``errors`` (the command then exits 2), not a silent 0."""
    t0 = time.monotonic()
    progress = (lambda m: print(f"  {m}", file=sys.stderr, flush=True)) if args.verbose else None

    def done(spec, rec):
        try:
            return keep(spec, rec, args.record)
        except OSError as e:
            (errors if errors is not None else []).append(
                f"{spec.slug}: its {rec.get('backend', '')} record was not written: {e.strerror or e}"
                f"{f': {e.filename2 or e.filename}' if e.filename else ''}")
            return rec

    out = detect_cases(specs, backends, trials=args.trials, seed=args.seed, jobs=args.jobs, gpu_jobs=args.gpu_jobs,
                       skip=args.skip, progress=progress, on_done=done)
    print(f"ran {len(specs)} cases on {', '.join(backends)} in {time.monotonic() - t0:.0f}s", file=sys.stderr)
    return out


def add_detect_options(p) -> None:
    add_run_options(p)
    p.add_argument("--gpu-jobs", type=positive_int, default=default_gpu_jobs(),
                   help="main GPU runs at once (default: the CPU count less 2, 2 to 12)")
    p.set_defaults(jobs=max(2, min(16, os.cpu_count() or 2)))
    for action in p._actions:
        if action.dest == "jobs":
            action.help = "interpreter runs and detector runs at once (default: the CPU count, 2 to 16)"
    p.add_argument("--record", action="store_true",
                   help="write cases/<slug>/recorded/detect-<backend>.json for the report, with the sha256 "
                        "of the case files it ran on (the report calls a record stale when they change)")
    p.add_argument("--skip", type=detector_names, default=frozenset(), metavar="NAMES",
                   help=f"detectors not to run, comma-separated, of: {', '.join(D.BY_NAME)}; their earlier "
                        "recorded findings are kept")
    p.add_argument("-v", "--verbose", action="store_true", help="print each run as it finishes")
