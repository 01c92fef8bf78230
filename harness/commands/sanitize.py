"""``python -m harness sanitize pytest ARGS`` / ``SCRIPT.py ARGS`` / ``-m MODULE ARGS``: the user's
own tests or program, unchanged, with every Triton launch checked.

Under the instrumented interpreter (the default) every load, store and atomic is checked
against the tensor its pointer came from before it happens, stores that another program of the
launch touches are races, masked lanes without ``other=`` that reach the result are reported,
and CUDA is faked where there is no GPU (``harness.sanitize``). ``--backend gpu`` runs the
command on the GPU under compute-sanitizer (``harness.sanitize.gpu``).

Ctrl-C (or SIGTERM) prints the findings made so far before the usual line and status (130, 143).

Exit status: 1 when an error finding was made; otherwise the command's own; with
``--report-only`` always the command's own (as ``pytest --casebook-sanitize=report``); 2 for bad
input (nothing to run, no such script, no GPU for ``--backend gpu``), one line each.
"""

from __future__ import annotations

import argparse
import sys

from harness.errors import EXIT_MISMATCH


def run(args) -> int:
    from harness.sanitize import findings as F
    from harness.sanitize.runner import parse_command
    from harness.sanitize.runner import run as run_job
    from harness.sanitize.session import Config

    job = parse_command(args.target, args.module)
    job.config = Config(tf32=args.tf32, orders=args.orders)
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
    _report(outcome, args)
    if job.mode == "report":  # findings reported, the status the command's own (as the plugin's report mode)
        return outcome.returncode
    return EXIT_MISMATCH if F.errors(outcome.findings) else outcome.returncode


def _report(outcome, args, interrupted: bool = False) -> None:
    """The findings: JSON on stdout with ``--json``, else the summary (``interrupted``: those made
    before Ctrl-C, said so)."""
    from harness.sanitize import findings as F

    if args.json:
        from harness.core import table

        extra = {"interrupted": True} if interrupted else {"returncode": outcome.returncode, "signal": outcome.signal}
        print(table.dumps(F.to_json(outcome.findings, outcome.launches, backend=args.backend, **extra)), flush=True)
    else:
        print(F.summary(outcome.findings, outcome.launches), flush=True)
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
    p.add_argument("--json", action="store_true", help="the findings as JSON on stdout (the command's output "
                                                       "goes to stderr)")
    p.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE ARGS",
                   help="run a module, as python -m MODULE ARGS")
    p.add_argument("target", nargs=argparse.REMAINDER, metavar="pytest ARGS | SCRIPT.py ARGS",
                   help="what to run: pytest and its arguments, or a script and its arguments")
    p.set_defaults(func=run)
