"""``python -m harness sanitize pytest ARGS`` / ``SCRIPT.py ARGS`` / ``-m MODULE ARGS``: the user's
own tests or program, unchanged, with every Triton launch checked.

Under the instrumented interpreter (the default) every load, store and atomic is checked
against the tensor its pointer came from before it happens, stores that another program of the
launch touches are races, masked lanes without ``other=`` that reach the result are reported,
and CUDA is faked where there is no GPU (``harness.sanitize``). ``--backend gpu`` runs the
command on the GPU under compute-sanitizer (``harness.sanitize.gpu``).

``--no-checks`` is the baseline to compare with: the same command under the interpreter with CUDA
faked and the interpreter's fixes, nothing checked (a test that fails so fails without the checks).

Ctrl-C (or SIGTERM) prints the findings made so far before the usual line and status (130, 143).

Exit status: 1 when an error finding was made; otherwise the command's own (pytest's, with a line
saying so); with ``--report-only`` always the command's own (as ``pytest --casebook-sanitize=report``);
2 for bad input (nothing to run, no such script, no GPU for ``--backend gpu``), one line each, and for
a command that ended before the sanitizer's end of run (an ``os._exit(0)`` in a test: the rest never
ran), which is never "no findings".
"""

from __future__ import annotations

import argparse
import sys

from harness.errors import EXIT_MISMATCH, EXIT_USAGE, UsageError


def run(args) -> int:
    from harness.sanitize import findings as F
    from harness.sanitize.runner import parse_command
    from harness.sanitize.runner import run as run_job
    from harness.sanitize.session import Config

    job = parse_command(args.target, args.module)
    if args.no_checks and args.backend == "gpu":
        raise UsageError("sanitize: --no-checks is the interpreter's baseline; it has no --backend gpu")
    if args.no_checks and (args.tf32 or args.orders):
        raise UsageError("sanitize: --no-checks checks nothing: it takes no --tf32 or --orders")
    job.config = Config(tf32=args.tf32, orders=args.orders, checks=not args.no_checks)
    job.mode = "report" if args.report_only else "fail"
    if args.backend == "gpu":
        from harness.sanitize import gpu

        gpu.require()
    try:
        outcome = run_job(job, quiet_stdout=args.json, backend=args.backend)
    except BaseException as e:  # interrupted: the findings so far, then the interruption's own line and status
        if (partial := getattr(e, "sanitize_outcome", None)) is not None:
            _report(partial, args, interrupted=True)
        raise
    sys.stdout.flush()
    if outcome.signal:
        print(f"sanitize: the command was killed by {outcome.signal}", file=sys.stderr, flush=True)
    # the sanitizer writes its launch count as the run ends: none, and the run ended before its end
    # (an os._exit, a kill) or never started (the child refused the job, having said why in one line)
    ended_early = args.backend == "interpreter" and outcome.launches is None and not (
        job.kind == "pytest" and outcome.returncode in (3, 4))  # pytest stopped before its session: its own line
    if ended_early and outcome.returncode == EXIT_USAGE and not outcome.findings and not outcome.signal:
        return EXIT_USAGE
    if ended_early:  # on a line of its own: the command may have stopped mid-line
        print(f"\nerror: sanitize: the command ended before the sanitizer's end of run (exit status "
              f"{outcome.returncode}{'' if outcome.signal else ', e.g. an os._exit'}): what ran after that point was "
              f"not checked, so these findings are not the whole run's", file=sys.stderr, flush=True)
    elif job.kind == "pytest" and outcome.returncode in PYTEST_CODES and not F.errors(outcome.findings):
        print(f"sanitize: exit status {outcome.returncode} is pytest's own: {PYTEST_CODES[outcome.returncode]}",
              file=sys.stderr, flush=True)
    _report(outcome, args, ended_early=ended_early)
    if job.mode != "report" and F.errors(outcome.findings):  # report mode: the status the command's own
        return EXIT_MISMATCH
    return EXIT_USAGE if ended_early and outcome.returncode == 0 else outcome.returncode


# pytest's exit statuses (pytest.ExitCode), passed through and named as pytest's
PYTEST_CODES = {1: "tests failed", 2: "interrupted (a collection error, or Ctrl-C)", 3: "pytest's internal error",
                4: "pytest's usage error (see pytest's message above)", 5: "no tests were collected"}


def _report(outcome, args, interrupted: bool = False, ended_early: bool = False) -> None:
    """The findings: JSON on stdout with ``--json``, else the summary (``interrupted``: those made
    before Ctrl-C, said so; ``ended_early``: the command ended before the sanitizer's end of run)."""
    from harness.sanitize import findings as F

    if args.json:
        from harness.core import table

        extra = {"checks": not args.no_checks}
        extra |= {"interrupted": True} if interrupted else {"returncode": outcome.returncode, "signal": outcome.signal,
                                                           "finished": not ended_early}
        print(table.dumps(F.to_json(outcome.findings, outcome.launches, backend=args.backend, **extra)), flush=True)
    elif interrupted or not (args.backend == "interpreter" and outcome.launches is None and not ended_early):
        print(F.summary(outcome.findings, outcome.launches, ended_early=ended_early, checks=not args.no_checks),
              flush=True)
        if interrupted:
            print("casebook sanitize: interrupted: the findings above are those made before it", flush=True)


def register(sub) -> None:
    p = sub.add_parser("sanitize", help="run your own tests or script with every Triton launch checked: "
                                        "out-of-bounds accesses, races between programs, masked lanes",
                       description="python -m harness sanitize [OPTIONS] pytest ARGS... | SCRIPT.py ARGS... | "
                                   "-m MODULE ARGS...")
    p.add_argument("--backend", choices=["interpreter", "gpu"], default="interpreter",
                   help="interpreter (default): the instrumented interpreter on the CPU, CUDA faked where there is "
                        "no GPU; gpu: the command on the GPU under compute-sanitizer")
    p.add_argument("--report-only", action="store_true",
                   help="report the findings and exit with the command's own status (pytest: without failing "
                        "the tests that made them), as pytest --casebook-sanitize=report does")
    p.add_argument("--tf32", action="store_true", help="round fp32 tl.dot like TF32, as an NVIDIA GPU does")
    p.add_argument("--orders", action="store_true",
                   help="re-run each launch in reversed and shuffled program order and compare")
    p.add_argument("--no-checks", action="store_true",
                   help="a baseline: the command under the interpreter with CUDA faked and the interpreter's fixes, "
                        "no launch checked (a test that fails so does not fail because of the checks)")
    p.add_argument("--json", action="store_true", help="the findings as JSON on stdout (the command's output "
                                                       "goes to stderr)")
    p.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE ARGS",
                   help="run a module, as python -m MODULE ARGS")
    p.add_argument("target", nargs=argparse.REMAINDER, metavar="pytest ARGS | SCRIPT.py ARGS",
                   help="what to run: pytest and its arguments, or a script and its arguments")
    p.set_defaults(func=run)
