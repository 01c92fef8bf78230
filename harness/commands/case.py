"""``python -m harness case <slug>``: run the broken and the fixed kernel side by side."""

from __future__ import annotations


from harness.core import table
from harness.errors import UsageError
from harness.options import add_run_options, add_selection, finish, load_specs
from harness.run.backends import resolve_backends
from harness.run.scheduler import run_case_matrix


def print_case(spec, runs, verdicts, args) -> None:
    print(f"\n{spec.slug}: {spec.title}")
    for line in table.env_lines([r.env for r in runs]):
        print(f"  {line}")
    print(table.case_table(verdicts, spec.calls, fmt=args.format))
    for r in runs:
        if r.status == "error" or (r.status == "crash" and args.verbose):
            print(f"  [{r.variant}/{r.backend}] {r.status}: {r.message}")
            if args.verbose:
                print("    " + r.output_tail.strip().replace("\n", "\n    "))


def run(args) -> int:
    if not args.slugs and not args.all:
        raise UsageError("name a case (python -m harness case nrm2-atomics) or pass --all")
    specs, errors = load_specs(args.slugs, args.all)
    backends = resolve_backends(args.backend)
    results = run_case_matrix(specs, backends, args.trials, args.seed, jobs=args.jobs)
    ok = not errors
    payload = []
    for spec in specs:
        runs, verdicts = results[spec.slug]
        ok &= all(v.as_declared for v in verdicts)
        if args.json:
            payload.append({"case": spec.slug, "title": spec.title, "env": [r.env for r in runs],
                            "runs": runs, "verdicts": verdicts})
        else:
            print_case(spec, runs, verdicts, args)
    if args.json:
        print(table.dumps(payload))
    return finish(errors, ok)


def register(sub) -> None:
    p = sub.add_parser("case", help="run the broken and the fixed kernel of cases, side by side")
    add_selection(p)
    add_run_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--format", default="github", help="tabulate format (default github)")
    p.add_argument("-v", "--verbose", action="store_true", help="show the output of crashed runs")
    p.set_defaults(func=run)
