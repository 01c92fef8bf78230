"""Recorded runs: writing what the harness printed into a case folder and its write-up.

``python -m harness record nrm2-race --backend gpu`` runs the case and writes

- ``cases/nrm2-race/recorded/gpu.md``: the command, device, versions, date and table
- ``cases/nrm2-race/recorded/gpu.json``: everything, machine-readable

and replaces the text between ``<!-- recorded:gpu -->`` and ``<!-- /recorded:gpu -->``
in the case's README.md. Nobody types these numbers.
"""

from __future__ import annotations

import re
from pathlib import Path

from harness.core import table


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
