"""The command line: ``python -m harness <command>`` (or the ``triton-casebook`` script).

Everything else is imported from here; nothing imports this module. This is the one
error boundary: whatever escapes a command ends as one line on stderr and one of the
exit codes in ``harness.errors``, never a traceback (``CASEBOOK_DEBUG=1`` shows it),
and every worker process the command started is killed before it returns.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import traceback

from harness.commands import COMMANDS
from harness.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, EXIT_USAGE, UsageError, error_line
from harness.run.isolate import WORKERS
from harness.run import versions


class Terminated(BaseException):
    """SIGTERM, raised in the main thread like KeyboardInterrupt is for SIGINT."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m harness", description="The Triton Misadventures casebook.")
    sub = p.add_subparsers(dest="command", metavar="command")
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"harness.commands.{name}").register(sub)
    return p


def say(message: str) -> None:
    """One line on stderr, whatever the message holds."""
    try:
        print("error: " + " ".join(str(message).split()), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def _one_line_errors(parser: argparse.ArgumentParser) -> None:
    """argparse's own errors (bad options, unknown commands): one line, exit 2."""
    def error(message):
        say(f"{message} (see 'python -m harness --help')")
        sys.exit(EXIT_USAGE)

    for action in [parser] + list(parser._subparsers._group_actions[0].choices.values()):
        action.error = error


def _on_signal(signum, frame):
    WORKERS.stop()  # at once: a hanging kernel must not hold the command
    raise KeyboardInterrupt if signum == signal.SIGINT else Terminated


def _quiet_stdout() -> None:
    """After a broken pipe (``| head``), send what is left of stdout nowhere."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def run_command(argv: list[str] | None) -> int:
    for stream in (sys.stdout, sys.stderr):  # an ASCII locale: a character it lacks is escaped, not fatal
        if (getattr(stream, "encoding", None) or "utf-8").lower().replace("-", "") != "utf8" \
                and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    _one_line_errors(parser)
    args = parser.parse_args(argv)
    _check_triton(args)
    return args.func(args)


def _check_triton(args) -> None:
    """A command that runs kernels refuses a Triton below the tested range (UsageError: one
    line, exit 2) and warns, in one line, about a newer one (harness.run.versions)."""
    if args.command in ("list", "new") or getattr(args, "no_run", False) or getattr(args, "splice_only", False):
        return
    error, warning = versions.check()
    if error:
        raise UsageError(error)
    if warning:
        print(warning, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None, restore_signals: bool = True) -> int:
    """The command's exit status. ``restore_signals`` false (``python -m harness``): the handlers are
    not put back after the command, so a signal as the process exits is not a traceback."""
    if sys.stdout is None:  # started with stdout closed (>&-): what it prints would be lost, and a 0 a lie
        say("standard output is closed: nothing the command prints could be seen (run it with stdout open)")
        return EXIT_USAGE
    old = {}
    for s in (signal.SIGINT, signal.SIGTERM):
        try:
            old[s] = signal.signal(s, _on_signal)
        except ValueError:  # not the main thread (called from a test's thread): no handlers
            pass
    try:
        return run_command(argv)
    except UsageError as e:
        say(e)
        return EXIT_USAGE
    except KeyboardInterrupt:
        say("interrupted")
        return EXIT_INTERRUPTED
    except Terminated:
        say("terminated")
        return EXIT_TERMINATED
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_OK
    except OSError as e:
        say(f"{e.strerror or error_line(e)}{f': {e.filename}' if e.filename else ''}")
        return EXIT_USAGE
    except Exception as e:
        if os.environ.get("CASEBOOK_DEBUG"):
            traceback.print_exc()
        say(f"the harness failed: {error_line(e)} (CASEBOOK_DEBUG=1 shows the traceback)")
        return EXIT_USAGE
    finally:
        for s in old:  # the command is over: a signal now is let go, its exit status stands
            signal.signal(s, signal.SIG_IGN)
        WORKERS.stop()  # nothing this command started outlives it
        WORKERS.reopen()
        for s, handler in old.items() if restore_signals else ():
            signal.signal(s, handler)
