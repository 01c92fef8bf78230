"""``python -m harness record <slug>``: run cases and write the output into each case folder.

``python -m harness record nrm2-race --backend gpu`` runs the case and writes
``cases/nrm2-race/recorded/gpu.md`` and ``gpu.json``, and splices the table into the
case's README between ``<!-- recorded:gpu -->`` markers. Nobody types these numbers.
"""

from __future__ import annotations

import sys

from harness.core import recorded, table
from harness.errors import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, UsageError
from harness.options import add_run_options, add_selection, load_specs
from harness.run.backends import resolve_backends
from harness.run.scheduler import run_case_matrix, trials_for


def record_one(spec, backend: str, runs, verdicts, args) -> bool:
    """Write one case's record; False (and one line on stderr) when it cannot or must not be written."""
    failed = recorded.harness_failures(runs) + [f"{r.variant}: {r.message}" for r in runs if r.unavailable]
    if failed:
        print(f"error: {spec.slug}: not recorded, the harness could not run it ({failed[0]}); "
              f"the recorded files are unchanged", file=sys.stderr)
        return False
    trials = trials_for(spec, backend, args.trials)
    cmd = f"python -m harness case {spec.slug} --backend {backend} --trials {trials} --seed {args.seed}"
    try:
        written = recorded.write_record(spec, backend, runs, verdicts, cmd)
    except OSError as e:
        print(f"error: {spec.slug}: not recorded: {e.strerror or e} ({e.filename or spec.path}); "
              f"the recorded files are unchanged", file=sys.stderr)
        return False
    for p in written:
        print(f"wrote {p.relative_to(spec.path.parent.parent)}")
    print(table.case_table(verdicts, spec.calls))
    return True


def run(args) -> int:
    if not args.slugs and not args.all:
        raise UsageError("name the cases to record (python -m harness record nrm2-race) or pass --all")
    specs, errors = load_specs(args.slugs, args.all)
    if args.splice_only:
        for spec in specs:
            print(f"{spec.slug}: {', '.join(recorded.splice_recorded(spec)) or 'nothing recorded'}")
        return EXIT_USAGE if errors else EXIT_OK
    backends = resolve_backends(args.backend)
    ok, written = True, True
    for backend in backends:
        results = run_case_matrix(specs, [backend], args.trials, args.seed, jobs=args.jobs)
        for spec in specs:
            runs, verdicts = results[spec.slug]
            ok &= all(v.as_declared for v in verdicts)
            written &= record_one(spec, backend, runs, verdicts, args)
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    if errors or not written:
        return EXIT_USAGE
    return EXIT_OK if ok else EXIT_MISMATCH


def register(sub) -> None:
    p = sub.add_parser("record", help="run cases and write the output into each case folder and write-up")
    add_selection(p)
    add_run_options(p)
    p.add_argument("--splice-only", action="store_true",
                   help="run nothing: copy recorded/*.md into the READMEs (after recording on another machine)")
    p.set_defaults(func=run)
