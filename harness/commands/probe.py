"""``python -m harness probe FILE``: every detector on a kernel of your own.

FILE holds a launcher (``launch``, or ``--launcher NAME``), ``make_inputs(*, device, gen,
**sizes)`` and ``reference(...)``; ``--inputs OTHER.py`` takes the last two from another
file (``probe cases/<slug>/broken.py --inputs cases/<slug>/case.py``). The detectors and
their findings live in ``harness.probe``; this module is the command line around them.

Exit status: 0 no error (warnings and information only; ``--strict``: no warning either),
1 an error (wrong now on some backend and size), 2 bad input (a
missing file, a file that raises or hangs at import or lacks the launcher, make_inputs or
reference; a make_inputs that raises; malformed FUZZ, DETERMINISTIC or TOLERANCE; ``--sizes``
make_inputs does not take; ``--backend gpu`` with no GPU; nothing ran, as with GPU-only
detectors on a CPU), each a one-line message.
"""

from __future__ import annotations

import os
import sys

from harness.core import table
from harness.errors import EXIT_MISMATCH, EXIT_OK, UsageError
from harness.options import positive_int, seconds, seed
from harness.run.backends import resolve_backends



def _detector_names() -> tuple:
    from harness.probe.detectors import names

    return names()


def _names(text: str) -> list:
    import argparse

    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:  # nothing would run, and "no findings" would be a lie
        raise argparse.ArgumentTypeError(f"names no detector (there are {', '.join(_detector_names())})")
    unknown = [n for n in names if n not in _detector_names()]
    if unknown:
        raise argparse.ArgumentTypeError(f"no detector {', '.join(unknown)} (there are {', '.join(_detector_names())})")
    return names


def _identifier(text: str) -> str:
    import argparse

    if not text.isidentifier():
        raise argparse.ArgumentTypeError(f"'{text}' is not a Python function name")
    return text


def _sizes(text: str) -> dict:
    import argparse

    try:
        pairs = [(k.strip(), int(v)) for k, v in (kv.split("=", 1) for kv in text.split(",") if kv.strip())]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not NAME=INT[,NAME=INT...]") from None
    if bad := [k for k, _ in pairs if not k.isidentifier()]:
        raise argparse.ArgumentTypeError(f"'{text}': {bad[0]!r} is not a size's name (NAME=INT[,NAME=INT...])")
    names = [k for k, _ in pairs]
    if twice := sorted({k for k in names if names.count(k) > 1}):
        raise argparse.ArgumentTypeError(f"'{text}' gives {twice[0]} more than once")
    return dict(pairs)


MIN_TIMEOUT_S = 1.0  # under this a detector is stopped before its first call has run, and that would be called a hang


def _timeout(text: str) -> float:
    """--timeout: a number of seconds, at least ``MIN_TIMEOUT_S``."""
    import argparse

    x = seconds(text)
    if x < MIN_TIMEOUT_S:
        raise argparse.ArgumentTypeError(f"{text} s is too short: a detector would be stopped before its first call "
                                         f"ran and that reported as a hang (at least {MIN_TIMEOUT_S:g} s)")
    return x


def _budget(text: str) -> float:
    """--budget: 0 (none) or a number of seconds."""
    try:
        none = float(text) == 0
    except ValueError:
        none = False
    return 0.0 if none else seconds(text)


def _own_start() -> float | None:
    """When this process started, where the process is this command (``python -m harness``, the
    ``triton-casebook`` script): the budget counts the command's own start (Python's, the imports). None
    where the command runs inside another program (a test calling ``cli.main``): the budget starts at
    the probe."""
    from harness.probe.budget import process_started

    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name == "harness.__main__" or os.path.basename(sys.argv[0] if sys.argv else "") == "triton-casebook":
        return process_started()
    return None


def run(args) -> int:
    from harness.probe.runner import ProbeInputError, probe

    backends = resolve_backends(args.backend)
    say = None if args.quiet else (lambda m: print(f"  {m}", file=sys.stderr, flush=True))
    options = {"tf32": not args.no_tf32, "poison_masked": not args.no_poison, "fuzz_trials": args.fuzz_trials,
               "large": args.large, "tools": args.tools, "pinned": sorted(args.sizes or {})}  # --sizes pins: the others are fuzzed
    try:
        report = probe(args.file, inputs=args.inputs, launcher=args.launcher, backends=backends,
                       detectors=args.only, seed=args.seed, sizes=args.sizes, jobs=args.jobs,
                       timeout=args.timeout, options=options, progress=say, budget=args.budget,
                       since=_own_start())
    except ProbeInputError as e:
        raise UsageError(f"probe: {e}") from None
    if not report.checked:
        why = "; ".join([f"{d} on {b}: {st}" for b, d, _, st in report.ran if not st.startswith("skipped")][:4]) or \
            f"none of these detectors runs on {', '.join(backends)}"
        more = f"; the --budget of {report.budget:g}s ended first: a larger one gives them the time" \
            if report.short_of_time() else ""
        raise UsageError(f"probe: no detector produced a result about the kernel ({why}), so nothing was "
                         f"checked{more}")
    if args.json:
        print(table.dumps(report.to_json()))
    else:
        print(report.text())
    failed = report.errors or (args.strict and report.warnings)
    return EXIT_MISMATCH if failed else EXIT_OK


def register(sub) -> None:
    p = sub.add_parser("probe", help="run every detector on a kernel of your own: out-of-bounds accesses, "
                                     "races, order dependence, shape fuzzing, autotune side effects")
    p.add_argument("file", help="a Python file with the launcher, make_inputs and reference")
    p.add_argument("--inputs", metavar="OTHER.py", help="take make_inputs and reference from this file")
    p.add_argument("--launcher", type=_identifier, default="launch",
                   help="the launcher's name in FILE (default: launch)")
    p.add_argument("--backend", choices=["gpu", "interpreter", "all"], default="all",
                   help="where to run (default: the GPU if there is one, and the interpreter)")
    p.add_argument("--detectors", "--only", dest="only", type=_names, default=None, metavar="NAMES",
                   help=f"run only these detectors, comma-separated, of: {', '.join(_detector_names())}")
    p.add_argument("--sizes", type=_sizes, default=None, metavar="N=V,...", help="sizes to use, pinned (shape fuzzing varies the others)")
    p.add_argument("--seed", type=seed, default=0, help="seed for inputs, program shuffles and fuzzing (default 0)")
    p.add_argument("--fuzz-trials", type=positive_int, default=24,
                   help="seeded mixes of sizes in shape fuzzing's plan, and in each later turn while its time lasts "
                        "(default 24)")
    p.add_argument("--large", action="store_true",
                   help="on the GPU, run sizes past 2**31 elements and bytes (int32 offsets) even where the "
                        "launched kernels show no int32 offset (with one, the probe runs them itself), outside "
                        "the budget")
    p.add_argument("--tools", action="store_true",
                   help="also run the kernel under the tools: compute-sanitizer (memcheck, racecheck), TRITON_DEBUG=1 and "
                        "Triton's sanitizers (those this Triton has) on the GPU, "
                        "triton-viz under the interpreter where it is installed (slow: a whole process under each; "
                        "--only NAME runs one)")
    p.add_argument("--no-tf32", action="store_true", help="do not round fp32 tl.dot like TF32 in the interpreter")
    p.add_argument("--no-poison", action="store_true",
                   help="leave masked lanes of a tl.load without other= at 0 in the interpreter")
    p.add_argument("--jobs", type=positive_int, default=2, help="detector processes at once (default 2)")
    p.add_argument("--timeout", type=_timeout, default=120.0, help="seconds each detector may take (default 120)")
    p.add_argument("--budget", type=_budget, default=None, metavar="SECONDS",
                   help="seconds for the whole probe: the detectors stop starting runs at its end, and keep "
                        "the diagnosis its share once a result is wrong (default: 60 on the CPU alone, 20 "
                        "with a GPU; 0: none, each detector keeps to its own time). --large and --tools add "
                        "their own runs")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 on warnings too (a kernel that relies on behaviour Triton leaves undefined)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=run)
