"""Finding case folders and loading their code. No registry: a folder is a case."""

from __future__ import annotations

import difflib
import importlib.util
import os
import sys
from pathlib import Path

from harness.core.spec import SLUG_RE, CaseSpec, SpecError, load_spec

REPO_ROOT = Path(__file__).resolve().parents[2]


def cases_dir() -> Path:
    """``$CASEBOOK_CASES``, else ``cases/`` beside the harness, else ``./cases``."""
    env = os.environ.get("CASEBOOK_CASES")
    if env:
        return Path(env).resolve()
    here = REPO_ROOT / "cases"
    if here.is_dir():
        return here
    return Path.cwd() / "cases"


def case_folders(root: Path | None = None) -> list[Path]:
    root = root or cases_dir()
    if not root.is_dir():
        return []
    try:
        return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))
    except OSError:
        return []


def slugs(root: Path | None = None) -> list[str]:
    return [p.name for p in case_folders(root)]


class UnknownCase(LookupError):
    pass


MAX_SLUG = 100


def find(slug: str, root: Path | None = None) -> Path:
    """The folder of ``slug``, or UnknownCase with close matches suggested.

    The slug is checked before it touches the file system: no path separators, no
    '..', nothing but lowercase words joined by '-'.
    """
    root = root or cases_dir()
    if len(slug) > MAX_SLUG or not SLUG_RE.match(slug):
        shown = repr(slug[:40] + ("..." if len(slug) > 40 else ""))
        raise UnknownCase(f"{shown} is not a case name (lowercase words joined by '-', "
                          f"at most {MAX_SLUG} characters); 'python -m harness list' shows them all")
    path = root / slug
    if path.is_dir():
        return path
    known = slugs(root)
    close = difflib.get_close_matches(slug, known, n=3, cutoff=0.5)
    close += [s for s in known if slug in s and s not in close][:3]
    hint = f"; did you mean {', '.join(close)}?" if close else "; 'python -m harness list' shows them all"
    raise UnknownCase(f"unknown case '{slug}'{hint}")


def load(slug: str, root: Path | None = None) -> CaseSpec:
    return load_spec(find(slug, root))


def load_all(root: Path | None = None) -> tuple[list[CaseSpec], list[str]]:
    """Every well-formed case, and one error line for each malformed folder."""
    specs, errors = [], []
    for p in case_folders(root):
        try:
            specs.append(load_spec(p))
        except SpecError as e:
            errors.append(str(e))
    return specs, errors


def import_file(path: Path, name: str):
    """Import a case's python file under a unique module name."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SpecError(f"{path}: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def module_name(spec: CaseSpec, part: str) -> str:
    return f"casebook_{spec.slug.replace('-', '_')}_{part}"


def load_module(spec: CaseSpec, part: str):
    """Import ``case``, ``broken`` or ``fixed`` of a case."""
    return import_file(spec.path / f"{part}.py", module_name(spec, part))
