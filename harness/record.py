"""Write what the harness printed for a case into the case folder, and into its write-up.

``python -m harness record nrm2-race --backend gpu`` runs the case and writes

- ``cases/nrm2-race/recorded/gpu.md``: the command, device, versions, date and table
- ``cases/nrm2-race/recorded/gpu.json``: everything, machine-readable

and replaces the text between ``<!-- recorded:gpu -->`` and ``<!-- /recorded:gpu -->``
in the case's README.md. Nobody types these numbers.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from harness import table


def marker(name: str) -> tuple[str, str]:
    if name == "cases":
        return "<!-- cases -->", "<!-- /cases -->"
    return f"<!-- recorded:{name} -->", f"<!-- /recorded:{name} -->"


def render(spec, backend: str, runs, verdicts, command: str) -> str:
    lines = ["```", f"$ {command}"] + table.env_lines([r.env for r in runs]) + ["```", ""]
    lines.append(table.case_table(verdicts, spec.calls, fmt="github"))
    return "\n".join(lines) + "\n"


def splice(readme: Path, backend: str, text: str) -> bool:
    """Put ``text`` between the backend's markers in ``readme``; False if it has none."""
    start, end = marker(backend)
    src = readme.read_text()
    pat = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pat.search(src):
        return False
    readme.write_text(pat.sub(lambda _: f"{start}\n{text}{end}", src))
    return True


def write_record(spec, backend: str, runs, verdicts, command: str) -> list[Path]:
    folder = spec.path / "recorded"
    folder.mkdir(exist_ok=True)
    text = render(spec, backend, runs, verdicts, command)
    md, js = folder / f"{backend}.md", folder / f"{backend}.json"
    md.write_text(text)
    js.write_text(table.dumps({"case": spec.slug, "backend": backend, "command": command,
                               "env": [r.env for r in runs], "runs": runs, "verdicts": verdicts}) + "\n")
    written = [md, js]
    if splice(spec.path / "README.md", backend, text):
        written.append(spec.path / "README.md")
    return written


RECORDED_BLOCKS = {"gpu": "gpu.md", "interpreter": "interpreter.md", "bench": "bench-gpu.md"}


def splice_recorded(spec) -> list[str]:
    """Copy each recorded/*.md into its block of the case's README (after a run elsewhere)."""
    done = []
    for block, name in RECORDED_BLOCKS.items():
        f = spec.path / "recorded" / name
        if f.is_file() and splice(spec.path / "README.md", block, f.read_text()):
            done.append(block)
    return done


def cmd_record(args) -> int:
    from harness.cli import EXIT_MISMATCH, EXIT_OK, EXIT_USAGE, load_specs, resolve_backends, run_case_matrix

    specs, errors = load_specs(args.slugs, args.all)
    if args.splice_only:
        for spec in specs:
            print(f"{spec.slug}: {', '.join(splice_recorded(spec)) or 'nothing recorded'}")
        return EXIT_USAGE if errors else EXIT_OK
    backends = resolve_backends(args.backend)
    ok = True
    for backend in backends:
        results = run_case_matrix(specs, [backend], args.trials, args.seed, jobs=args.jobs)
        for spec in specs:
            runs, verdicts = results[spec.slug]
            ok &= all(v.as_declared for v in verdicts)
            trials = args.trials or spec.trials[backend]
            cmd = f"python -m harness case {spec.slug} --backend {backend} --trials {trials} --seed {args.seed}"
            for p in write_record(spec, backend, runs, verdicts, cmd):
                print(f"wrote {p.relative_to(spec.path.parent.parent)}")
            print(table.case_table(verdicts, spec.calls))
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    return EXIT_USAGE if errors else (EXIT_OK if ok else EXIT_MISMATCH)


def register(sub) -> None:
    from harness.cli import add_run_options

    p = sub.add_parser("record", help="run cases and write the output into each case folder and write-up")
    p.add_argument("slugs", nargs="*", metavar="slug")
    p.add_argument("--all", action="store_true", help="every case")
    add_run_options(p)
    p.add_argument("--splice-only", action="store_true",
                   help="run nothing: copy recorded/*.md into the READMEs (after recording on another machine)")
    p.set_defaults(func=cmd_record)
