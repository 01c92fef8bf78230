"""``python -m harness lint PATH...``: the casebook's traps found by reading the code, no inputs, no GPU.

One line per finding, ``path:line:col: CODE message [cases/<slug>]``; ``--format json`` or ``sarif``
(SARIF 2.1.0, for GitHub code scanning) instead. docs/lint-rules.md lists the rules.

Exit status: 0 no finding, 1 findings, 2 bad input: an unknown rule in --select/--ignore, a path that
does not exist (or is empty), or a file that cannot be linted: not a regular file (a FIFO, a device, a
link to nothing or that loops), larger than --max-size, not decodable, not parseable, or one lint
itself failed on (one line on stderr each; the other files are still linted and their findings printed,
the SARIF file still written; harness/lint/files.py). 2 wins over 1: a run that could not read every file cannot
vouch for the code, and CI should say so rather than report a partial result as the whole.
"""

from __future__ import annotations

import argparse
import sys

from harness.errors import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, UsageError


def size(text: str) -> int:
    """An argparse type: ``4M``, ``512K`` or a number of bytes, at least 1."""
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper(), 1)
    try:
        value = int(float(text[:-1] if scale > 1 else text) * scale)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (bytes, or a number with K, M or G)") from None
    if not 0 < value < 1 << 40:
        raise argparse.ArgumentTypeError(f"{text!r}: a size from 1 byte to 1024G")
    return value


def split_codes(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


def run(args) -> int:
    from harness.lint import engine, output

    select, ignore = split_codes(args.select), split_codes(args.ignore)
    unknown = engine.unknown_codes((select or []) + (ignore or []))
    if unknown:
        raise UsageError(f"no lint rule is called {', '.join(unknown)} (python -m harness lint --list shows them)")
    if args.list:
        for r in engine.selected(["ALL"]):
            print(f"{r.code}  {r.name:34} {r.confidence:6} {'preview ' if r.preview else ''}{r.summary}")
        return EXIT_OK
    if not args.paths:
        raise UsageError("name at least one file or folder to lint")
    if args.fix or args.diff:
        code = fix(args, select, ignore)
        if args.diff or code == EXIT_USAGE:
            return code
    result = engine.lint_paths(args.paths, select, ignore, min_severity=args.min_severity,
                               **({"max_bytes": args.max_size} if args.max_size else {}))
    for e in result.errors:
        print(e, file=sys.stderr, flush=True)
    print(output.FORMATS[args.format](result))
    if result.errors:
        return EXIT_USAGE
    return EXIT_MISMATCH if result.findings else EXIT_OK


def fix(args, select, ignore) -> int:
    """--diff: print what --fix would change (exit 1 if anything, 0 if nothing); --fix: change it (each file
    whole or untouched), say so on stderr, then lint as usual what is left."""
    from harness.lint import fixing

    done = fixing.fix_paths(args.paths, select, ignore, write=not args.diff, max_bytes=args.max_size)
    for e in done.errors:
        print(e, file=sys.stderr, flush=True)
    if args.diff:
        print(done.diff, end="")
        print(f"{done.fixes} fix{'es' * (done.fixes != 1)} in {len(done.files)} file{'s' * (len(done.files) != 1)} "
              f"(not written: --fix writes them)", file=sys.stderr)
        return EXIT_USAGE if done.errors else EXIT_MISMATCH if done.fixes else EXIT_OK
    print(f"fixed {done.fixes} finding{'s' * (done.fixes != 1)} in {len(done.files)} "
          f"file{'s' * (len(done.files) != 1)}", file=sys.stderr)
    return EXIT_USAGE if done.errors else EXIT_OK


def register(sub) -> None:
    p = sub.add_parser("lint", help="find the casebook's traps in kernel source code: ast only, no GPU, no inputs",
                       description="Reads Python files (no import), finds @triton.jit kernels and their launches, "
                                   "and reports the casebook's traps, one line each: path:line:col: CODE message "
                                   "[cases/<slug>]. docs/lint-rules.md lists the rules. Exit 0 clean, 1 findings, "
                                   "2 bad input (a file that does not parse: the others are still linted).")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (folders: every .py under them)")
    p.add_argument("--format", choices=["text", "json", "sarif"], default="text",
                   help="text (default), json, or sarif (SARIF 2.1.0, for GitHub code scanning)")
    p.add_argument("--select", action="append", metavar="CODES",
                   help="only these rules (codes or prefixes, comma-separated: TL1,TL301; ALL for every rule, "
                        "preview ones included); default: every rule that is not preview")
    p.add_argument("--ignore", action="append", metavar="CODES", help="leave these rules out (codes or prefixes)")
    p.add_argument("--fix", action="store_true",
                   help="apply the mechanical fixes (other= for a max, reset_to_zero=/restore_value= on an "
                        "autotune, an int64 cast, input_precision=\"ieee\" where TL601 is selected), then report "
                        "what is left")
    p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff and write nothing "
                                                          "(exit 1 if there are any)")
    p.add_argument("--min-severity", choices=["hazard", "bug"], default="hazard",
                   help="report only findings of this severity or more: bug (wrong through the launcher as "
                        "written, at some size) or hazard (every finding: also those that depend on sizes, "
                        "configs or callers lint cannot see); default hazard")
    p.add_argument("--max-size", type=size, default=None, metavar="SIZE",
                   help="skip (with an error line) files larger than this: bytes, or with K, M or G (default 1M)")
    p.add_argument("--list", action="store_true", help="list the rules and exit")
    p.set_defaults(func=run, no_run=True)  # lint runs nothing: no Triton version check (cli._check_triton)
