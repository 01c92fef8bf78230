"""``python -m harness record <slug>``: run cases and write the output into each case folder.

``python -m harness record nrm2-race --backend gpu`` runs the case and writes
``cases/nrm2-race/recorded/gpu.md`` and ``gpu.json``, and splices the table into the
case's README between ``<!-- recorded:gpu -->`` markers. Nobody types these numbers.

``python -m harness record nrm2-race --splice-only`` runs nothing: it copies the
recorded/*.md files into the README, fills its ``<!-- code:... -->`` and
``<!-- diff:... -->`` blocks from the case's files (``harness.core.snippets``) and its
``harness lint`` line (``harness.lint.docs``), saying which blocks it changed.

Both also bring README.md's table of cases up to date (``harness.core.casetable``):
run after case.toml is filled in, they leave nothing else to regenerate.
"""

from __future__ import annotations

import argparse
import sys

from harness.core import casetable, fileio, recorded, snippets, table
from harness.core.spec import SLUG_RE
from harness.errors import EXIT_OK, EXIT_USAGE, UsageError, error_line
from harness.options import add_run_options, add_selection, finish, load_specs
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
        name = f"{backend}-{args.as_name}" if args.as_name and backend == "gpu" else None
        written = recorded.write_record(spec, backend, runs, verdicts, cmd, name=name)
    except OSError as e:
        print(f"error: {spec.slug}: not recorded: {e.strerror or e} ({e.filename or spec.path}); "
              f"the recorded files are unchanged", file=sys.stderr)
        return False
    for p in written:
        print(f"wrote {p.relative_to(spec.path.parent.parent)}")
    print(table.case_table(verdicts, spec.calls))
    return True


def fill_code_blocks(spec) -> str:
    """Fill the write-up's code and diff blocks from the case's files, atomically; what changed, in words.

    SnippetError (a marker that names an unknown file or function ...), OSError or
    UnicodeDecodeError when it cannot: then the write-up is left as it was.
    """
    readme = spec.path / "README.md"
    text = readme.read_text(encoding="utf-8")
    before = snippets.blocks(text)
    if not before:
        return "no code blocks"
    stale = {line for line, _ in snippets.stale(text, spec.path)}
    new = snippets.fill(text, spec.path)
    if new == text:
        return f"code blocks up to date ({len(before)})"
    fileio.write_text(readme, new)
    after = snippets.blocks(new)  # the same blocks, in the same order, at their new lines
    filled = [f"{b.marker} at README.md:{a.line}" for b, a in zip(before, after) if b.line in stale]
    return f"filled {len(filled)} code block(s): " + ", ".join(filled)


def fill_lint_line(spec) -> str:
    """The line that ends the write-up's "How to catch it": which ``harness lint`` rules flag broken.py
    (linted now), written atomically; what changed, in words. ValueError when the write-up has no
    such section; SyntaxError, OSError or UnicodeDecodeError when it cannot be made."""
    from harness.lint.docs import case_block, with_case_block

    readme = spec.path / "README.md"
    text = readme.read_text(encoding="utf-8")
    if "## How to catch it" not in text:
        raise ValueError("the write-up has no '## How to catch it' section for the harness lint line")
    new = with_case_block(text, case_block(spec.path))
    if new == text:
        return "lint line up to date"
    fileio.write_text(readme, new)
    return "lint line written"


def splice_only(specs, errors: list[str]) -> int:
    """``record --splice-only``: recorded/*.md into the write-ups, and their code blocks from the files."""
    failed = False
    for spec in specs:
        try:
            spliced = ", ".join(recorded.splice_recorded(spec)) or "nothing recorded"
            code = f"{fill_code_blocks(spec)}; {fill_lint_line(spec)}"
        except snippets.SnippetError as e:
            print(f"error: {spec.slug}: README.md: {e} (the code blocks are unchanged: correct the marker or the file "
                  f"it names; CONTRIBUTING.md gives the syntax)", file=sys.stderr)
            failed = True
            continue
        except (OSError, UnicodeDecodeError, ValueError, SyntaxError) as e:
            print(f"error: {spec.slug}: not spliced: {error_line(e)}", file=sys.stderr)
            failed = True
            continue
        print(f"{spec.slug}: {spliced}; {code}")
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    return EXIT_USAGE if errors or failed else EXIT_OK


def tag(text: str) -> str:
    if not SLUG_RE.match(text) or len(text) > 20:
        raise argparse.ArgumentTypeError(f"{text!r}: use a short lowercase word, e.g. h200")
    return text


def run(args) -> int:
    if not args.slugs and not args.all:
        raise UsageError("name the cases to record (python -m harness record nrm2-race) or pass --all")
    specs, errors = load_specs(args.slugs, args.all)
    if args.splice_only:
        status = splice_only(specs, errors)
        casetable.refresh_readme()  # case.toml is filled in by now: the README's row shows it
        return status
    backends = resolve_backends(args.backend)
    ok, written = True, True
    for backend in backends:
        results = run_case_matrix(specs, [backend], args.trials, args.seed, jobs=args.jobs)
        for spec in specs:
            runs, verdicts = results[spec.slug]
            ok &= all(v.as_declared for v in verdicts)
            written &= record_one(spec, backend, runs, verdicts, args)
    casetable.refresh_readme()
    return finish(errors + ([] if written else ["some cases were not recorded (see above)"]), ok)


def register(sub) -> None:
    p = sub.add_parser("record", help="run cases and write the output into each case folder and write-up")
    add_selection(p)
    add_run_options(p)
    p.add_argument("--as", dest="as_name", metavar="TAG", type=tag,
                   help="write the GPU run as recorded/gpu-TAG.md/.json (a second GPU model, e.g. h200), "
                        "leaving recorded/gpu.* as they are")
    p.add_argument("--splice-only", action="store_true",
                   help="run nothing: copy recorded/*.md into the READMEs (after recording on another machine), "
                        "and fill their code and diff blocks from the case files")
    p.set_defaults(func=run)
