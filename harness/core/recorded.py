"""Recorded runs: writing what the harness printed into a case folder and its write-up.

``python -m harness record nrm2-race --backend gpu`` runs the case and writes

- ``cases/nrm2-race/recorded/gpu.md``: the command, device, versions, date and table
- ``cases/nrm2-race/recorded/gpu.json``: everything, machine-readable

and replaces the text between ``<!-- recorded:gpu -->`` and ``<!-- /recorded:gpu -->``
in the case's README.md. Nobody types these numbers.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from harness.core import fileio, table


SOURCE_FILES = ("broken.py", "fixed.py", "case.py", "case.toml", "fast.py")  # fast.py: where a case has one
# What a run measured in case.toml: everything but the tables and keys that only describe the case
# (its words, its labels, its links, its triggers, the probe's declared evidence). A record is stale when the
# kernels, case.py or this part changed; a new [diagnosis] does not make every record stale.
DESCRIPTIVE = ("title", "summary", "category", "defect", "seen_in", "triggers", "diagnosis")
MEASURED_TOML = "case.toml[measured]"  # the key of its hash in a record's ``sources``


def measured_toml_hash(data: bytes) -> str | None:
    """sha256 of case.toml's measured part (``DESCRIPTIVE`` left out, keys sorted); None when it does not parse."""
    import json
    import tomllib

    try:
        meta = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    kept = {k: v for k, v in meta.items() if k not in DESCRIPTIVE}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()


def source_hashes(folder: Path, legacy: bool = False) -> dict[str, str]:
    """{file name: sha256} of the case files a run depends on (those present): a record keeps
    them, and a record whose hashes differ from the files now is stale. case.toml counts by its
    measured part (``MEASURED_TOML``; a toml that does not parse, by its bytes); ``legacy``: by its
    bytes, as records made before that keep it."""
    out = {}
    for name in SOURCE_FILES:
        try:
            data = (Path(folder) / name).read_bytes()
        except FileNotFoundError:
            continue
        measured = None if legacy or name != "case.toml" else measured_toml_hash(data)
        if measured is not None:
            out[MEASURED_TOML] = measured
        else:
            out[name] = hashlib.sha256(data).hexdigest()
    return out


def stale_files(recorded: dict | None, folder: Path) -> list[str] | None:
    """The case files that changed since a record's ``sources`` were taken ([] when none did);
    None when the record keeps no hashes at all. A record that keeps case.toml's whole-file hash
    (made before ``MEASURED_TOML``) is compared by the whole file."""
    if not isinstance(recorded, dict) or not recorded:
        return None
    now = source_hashes(folder, legacy="case.toml" in recorded and MEASURED_TOML not in recorded)
    return sorted({n.removesuffix("[measured]") for n in set(now) | set(recorded) if now.get(n) != recorded.get(n)})


def marker(name: str) -> tuple[str, str]:
    if name == "cases":
        return "<!-- cases -->", "<!-- /cases -->"
    return f"<!-- recorded:{name} -->", f"<!-- /recorded:{name} -->"


def render(spec, backend: str, runs, verdicts, command: str) -> str:
    lines = ["```", f"$ {command}"] + table.env_lines([r.env for r in runs]) + ["```", ""]
    lines.append(table.case_table(verdicts, spec.calls, fmt="github"))
    return "\n".join(lines) + "\n"


def spliced(src: str, block: str, text: str) -> str | None:
    """``src`` with ``text`` between the block's markers; None if it has none."""
    start, end = marker(block)
    pat = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pat.search(src):
        return None
    return pat.sub(lambda _: f"{start}\n{text}{end}", src)


def splice(readme: Path, block: str, text: str) -> bool:
    """Put ``text`` between the block's markers in ``readme`` (atomically); False if it has none."""
    new = spliced(readme.read_text(), block, text)
    if new is None:
        return False
    fileio.write_text(readme, new)
    return True


def harness_failures(runs) -> list[str]:
    """The runs in which the harness itself failed (not the kernel): nothing to record."""
    return [f"{r.variant} on {r.backend}: {r.message}" for r in runs if r.status == "error" or
            (r.status not in ("skip",) and not r.env)]


def write_record(spec, backend: str, runs, verdicts, command: str, name: str | None = None) -> list[Path]:
    """recorded/<name>.md and .json (name: the backend, or e.g. gpu-h200 for a second GPU's
    run), and the README's block of that name, written as one unit."""
    folder = spec.path / "recorded"
    folder.mkdir(exist_ok=True)
    text = render(spec, backend, runs, verdicts, command)
    name = name or backend
    files = {folder / f"{name}.md": text,
             folder / f"{name}.json": table.dumps({"case": spec.slug, "backend": backend, "command": command,
                                                      "env": [r.env for r in runs], "runs": runs,
                                                      "verdicts": verdicts, TEXT_HASH: text_hash(text)}) + "\n"}
    readme = spec.path / "README.md"
    new_readme = spliced(readme.read_text(), name, text)
    if new_readme is not None:
        files[readme] = new_readme
    return fileio.write_together(files)


TEXT_HASH = "md_sha256"  # in recorded/<name>.json: the hash of recorded/<name>.md written with it


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def torn(folder: Path, name: str) -> str | None:
    """Why recorded/<name>.md and <name>.json are not one record (a write cut off by SIGKILL or a
    power cut between their renames), or None when they are, or when the JSON keeps no hash (older)."""
    import json

    md, js = Path(folder) / "recorded" / f"{name}.md", Path(folder) / "recorded" / f"{name}.json"
    try:
        want = json.loads(js.read_bytes()).get(TEXT_HASH)
        text = md.read_text(encoding="utf-8")
    except (OSError, ValueError, AttributeError):
        return None  # a file missing or unreadable: the readers say so in their own words
    if want is None or want == text_hash(text):
        return None
    return (f"recorded/{name}.md and recorded/{name}.json are not from the same run (a record cut off as it "
            f"was written): record it again (python -m harness record {Path(folder).name} --backend ...)")


def write_bench(spec, body: str) -> list[Path]:
    """recorded/bench-gpu.md and the README's bench block, as one unit."""
    (spec.path / "recorded").mkdir(exist_ok=True)
    files = {spec.path / "recorded" / "bench-gpu.md": body}
    readme = spec.path / "README.md"
    if (new := spliced(readme.read_text(), "bench", body)) is not None:
        files[readme] = new
    return fileio.write_together(files)


RECORDED_BLOCKS = {"gpu": "gpu.md", "gpu-h200": "gpu-h200.md", "gpu-h200-earlier": "gpu-h200-earlier.md",
                   "interpreter": "interpreter.md", "bench": "bench-gpu.md"}


def splice_recorded(spec) -> list[str]:
    """Copy each recorded/*.md into its block of the case's README (after a run elsewhere);
    ValueError, with nothing written, when a record is torn (``torn``)."""
    readme = spec.path / "README.md"
    src = new = readme.read_text()
    done = []
    for block, name in RECORDED_BLOCKS.items():
        f = spec.path / "recorded" / name
        if why := torn(spec.path, Path(name).stem):
            raise ValueError(why)
        if f.is_file() and (after := spliced(new, block, f.read_text())) is not None:
            new, done = after, done + [block]
    if new != src:
        fileio.write_text(readme, new)
    return done
