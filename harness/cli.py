"""The command line: ``python -m harness <command>`` (or the ``triton-casebook`` script).

Every bad input ends in one line on stderr and exit status 2; a kernel that does not
behave as its case declares gives exit status 1.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from concurrent.futures import ThreadPoolExecutor

from tabulate import tabulate

from harness import discovery, table
from harness.spec import BACKENDS, VARIANTS, SpecError

EXIT_OK, EXIT_MISMATCH, EXIT_USAGE = 0, 1, 2

# Commands that live in their own modules; each module has register(subparsers).
COMMAND_MODULES = ["harness.bench", "harness.record", "harness.scaffold", "harness.validate", "harness.detect",
                   "harness.report"]


class UsageError(Exception):
    """Bad input: printed as one line, exit status 2."""


def positive_int(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def resolve_backends(choice: str) -> list[str]:
    if choice == "gpu":
        if not cuda_available():
            raise UsageError("--backend gpu: no CUDA GPU is available on this machine "
                             "(use --backend interpreter)")
        return ["gpu"]
    if choice == "interpreter":
        return ["interpreter"]
    return (["gpu"] if cuda_available() else []) + ["interpreter"]


def load_specs(slugs: list[str], all_cases: bool):
    """The specs named (or all); unknown or malformed cases are UsageErrors."""
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


def run_case_matrix(specs, backends, trials, seed, jobs=2, variants=VARIANTS, save_root=None):
    """Run every (case, variant, backend); returns {slug: (runs, verdicts)}.

    GPU runs go one at a time; interpreter runs share ``jobs`` workers.
    """
    import threading

    from harness.isolate import run_isolated
    from harness.verdict import judge

    gpu_lock = threading.Lock()
    tasks = [(s, v, b) for s in specs for b in backends for v in variants]

    def one(task):
        spec, variant, backend = task
        n = trials or spec.trials[backend]
        save = str(save_root / spec.slug / f"{variant}-{backend}") if save_root else None
        if backend == "gpu":
            with gpu_lock:
                run = run_isolated(spec, variant, backend, trials=n, seed=seed, save=save)
        else:
            run = run_isolated(spec, variant, backend, trials=n, seed=seed, save=save)
        return run, judge(spec, run)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, tasks))
    out = {}
    for (spec, _, _), (run, verdicts) in zip(tasks, results):
        runs, vs = out.setdefault(spec.slug, ([], []))
        runs.append(run)
        vs.extend(verdicts)
    return out


def case_rows(specs, links: bool = False) -> list[list]:
    return [[f"[{s.slug}](cases/{s.slug}/README.md)" if links else s.slug, s.category, s.defect,
             s.expect_text("gpu"), s.expect_text("interpreter"), s.title] for s in specs]


LIST_HEADERS = ["case", "category", "defect", "broken on gpu", "broken on interpreter", "title"]


def update_readme_table(specs) -> bool:
    """Rewrite the table of cases between <!-- cases --> markers in README.md."""
    from harness.record import splice

    readme = discovery.REPO_ROOT / "README.md"
    example = discovery.cases_dir() / "nrm2-atomics" / "recorded" / "gpu.md"
    if example.is_file():
        splice(readme, "example", example.read_text())
    return splice(readme, "cases", readme_table(specs))


def readme_table(specs) -> str:
    return tabulate(case_rows(specs, links=True), headers=LIST_HEADERS, tablefmt="github") + "\n"


def cmd_list(args) -> int:
    specs, errors = discovery.load_all()
    rows = case_rows(specs)
    if args.update_readme and not errors:
        update_readme_table(specs)
    if args.json:
        print(table.dumps([{"slug": s.slug, "title": s.title, "category": s.category, "defect": s.defect,
                            "summary": s.summary, "expect": s.expect} for s in specs]))
    else:
        print(tabulate(rows, headers=LIST_HEADERS, tablefmt=args.format))
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    return EXIT_USAGE if errors else EXIT_OK


def cmd_case(args) -> int:
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
            continue
        print(f"\n{spec.slug}: {spec.title}")
        for line in table.env_lines([r.env for r in runs]):
            print(f"  {line}")
        print(table.case_table(verdicts, spec.calls, fmt=args.format))
        for r in runs:
            if r.status in ("error",) or (r.status == "crash" and args.verbose):
                print(f"  [{r.variant}/{r.backend}] {r.status}: {r.message}")
                if args.verbose:
                    print("    " + r.output_tail.strip().replace("\n", "\n    "))
    if args.json:
        print(table.dumps(payload))
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    if errors:
        return EXIT_USAGE
    return EXIT_OK if ok else EXIT_MISMATCH


def add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--backend", choices=["gpu", "interpreter", "all"], default="all",
                   help="where to run (default: the GPU if there is one, and the interpreter)")
    p.add_argument("--trials", type=positive_int, default=None,
                   help="runs per variant (default: the case's [run] trials)")
    p.add_argument("--seed", type=int, default=0, help="seed for the inputs (default 0)")
    p.add_argument("--jobs", type=positive_int, default=2, help="interpreter processes at once (default 2)")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m harness", description="The Triton Misadventures casebook.")
    sub = p.add_subparsers(dest="command", metavar="command")
    sub.required = True

    pl = sub.add_parser("list", help="every case, with its category and declared behaviour")
    pl.add_argument("--json", action="store_true")
    pl.add_argument("--format", default="simple", help="tabulate format (default simple; github for Markdown)")
    pl.add_argument("--update-readme", action="store_true", help="rewrite the table of cases in README.md")
    pl.set_defaults(func=cmd_list)

    pc = sub.add_parser("case", help="run the broken and the fixed kernel of cases, side by side")
    pc.add_argument("slugs", nargs="*", metavar="slug")
    pc.add_argument("--all", action="store_true", help="every case")
    add_run_options(pc)
    pc.add_argument("--json", action="store_true", help="machine-readable output")
    pc.add_argument("--format", default="github", help="tabulate format (default github)")
    pc.add_argument("-v", "--verbose", action="store_true", help="show the output of crashed runs")
    pc.set_defaults(func=cmd_case)

    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()

    def error(message):  # argparse's own errors: one line, exit 2
        print(f"error: {message} (see 'python -m harness --help')", file=sys.stderr)
        sys.exit(EXIT_USAGE)

    for action in [parser] + [a for a in parser._subparsers._group_actions[0].choices.values()]:
        action.error = error
    args = parser.parse_args(argv)
    try:
        if args.command == "case" and not args.slugs and not args.all:
            raise UsageError("name a case (python -m harness case nrm2-atomics) or pass --all")
        return args.func(args)
    except UsageError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
