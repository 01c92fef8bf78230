"""``python -m harness check [<slug>...]``: validate case folders, one line per problem.

Each line is ``<level>: <file>[:<line>]: <code> <what is wrong> (<how to fix it>)``;
docs/check-rules.md lists the codes. Exit status 0 when there is no error, 1 when
there is one, 2 for bad input.
"""

from __future__ import annotations

from harness.checks.engine import check_folders
from harness.checks.problem import ERROR, WARNING
from harness.core import discovery
from harness.errors import EXIT_OK, UsageError
from harness.options import positive_int


def run(args) -> int:
    root = discovery.cases_dir()
    if args.slugs:
        try:
            folders = [discovery.find(s) for s in args.slugs]
        except discovery.UnknownCase as e:
            raise UsageError(str(e)) from None
    else:
        folders = discovery.case_folders(root)
        if not folders:
            raise UsageError(f"no cases found under {root}")
    checks = check_folders(folders, root, run=not args.no_run, jobs=args.jobs)
    errors = warnings = failed = 0
    for c in checks:
        for p in c.problems:
            if args.strict and p.level == WARNING:
                p.level = ERROR
            print(p)
        n_err = sum(p.level == ERROR for p in c.problems)
        n_warn = len(c.problems) - n_err
        errors, warnings, failed = errors + n_err, warnings + n_warn, failed + bool(n_err)
        if not n_err:
            print(f"ok: {c.prefix}" + (f" ({n_warn} warning{'s' * (n_warn > 1)})" if n_warn else ""))
    ran = "" if args.no_run else ", interpreter runs included"
    print(f"checked {len(checks)} case(s){ran}: {failed} with errors; {errors} error(s), {warnings} warning(s)")
    return 1 if errors else EXIT_OK


def register(sub) -> None:
    p = sub.add_parser("check", help="validate case folders: files, metadata, write-up, markers, records, "
                                     "and a run under the interpreter",
                       description="One line per problem: level, file:line, the rule's code, what is wrong "
                                   "(how to fix it). docs/check-rules.md lists the rules.")
    p.add_argument("slugs", nargs="*", metavar="slug", help="the cases to check (default: all)")
    p.add_argument("--strict", action="store_true",
                   help="warnings are errors too (a missing or stale recorded GPU run among them)")
    p.add_argument("--no-run", action="store_true", help="static checks only: skip the interpreter run")
    p.add_argument("--jobs", type=positive_int, default=2, help="interpreter processes at once (default 2)")
    p.set_defaults(func=run)
