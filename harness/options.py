"""Command-line options and case selection shared by the commands.

Only ``harness.commands`` and ``harness.cli`` import this module.
"""

from __future__ import annotations

import argparse
import sys

from harness.core import discovery
from harness.core.spec import SpecError
from harness.errors import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, UsageError

MAX_SEED = 2**63 - 1  # torch.Generator.manual_seed takes a signed 64-bit seed


def positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


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


def seed(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if not 0 <= n <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2**63-1, got {n}")
    return n


def add_selection(p: argparse.ArgumentParser, what: str = "every case") -> None:
    """The slugs a command works on, or --all."""
    p.add_argument("slugs", nargs="*", metavar="slug")
    p.add_argument("--all", action="store_true", help=what)


def add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=["gpu", "interpreter", "all"], default="all",
                   help="where to run (default: the GPU if there is one, and the interpreter)")
    p.add_argument("--trials", type=positive_int, default=None,
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
