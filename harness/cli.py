"""The command line: ``python -m harness <command>`` (or the ``triton-casebook`` script).

Everything else is imported from here; nothing imports this module. Every bad input
ends in one line on stderr and exit status 2; a kernel that does not behave as its
case declares gives exit status 1 (``harness.errors`` lists the codes).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from harness.commands import COMMANDS
from harness.errors import EXIT_INTERRUPTED, EXIT_USAGE, UsageError


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m harness", description="The Triton Misadventures casebook.")
    sub = p.add_subparsers(dest="command", metavar="command")
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"harness.commands.{name}").register(sub)
    return p


def _one_line_errors(parser: argparse.ArgumentParser) -> None:
    """argparse's own errors (bad options, unknown commands): one line, exit 2."""
    def error(message):
        print(f"error: {message} (see 'python -m harness --help')", file=sys.stderr)
        sys.exit(EXIT_USAGE)

    for action in [parser] + list(parser._subparsers._group_actions[0].choices.values()):
        action.error = error


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    _one_line_errors(parser)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
