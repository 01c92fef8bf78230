"""``python -m harness new <slug>``: a new case folder, from the templates in ``harness/templates``.

The new case runs at once (its kernels are a correct copy kernel), and ``check``
fails it, one line per TODO, until it is filled in: its broken kernel does not yet
do what ``case.toml`` declares. The folder appears whole or not at all (made beside
its place, then renamed), and README.md's table of cases gains its row.
"""

from __future__ import annotations

import argparse
import json
import keyword
import os
import tomllib
from importlib import resources
from pathlib import Path
from string import Template

from harness.core import casetable, discovery, fileio
from harness.errors import EXIT_OK, UsageError, error_line
from harness.core.spec import BEHAVIOURS, CATEGORIES, DEFECTS, REQUIRED_FILES, SLUG_RE

DEFAULT_CATEGORY, DEFAULT_DEFECT = "bounds", "out-of-bounds-write"


def default_launcher(slug: str) -> str:
    """The slug's first word (``nrm2-race`` -> ``nrm2``) when it is a usable name."""
    word = slug.split("-")[0]
    return word if word.isidentifier() and not keyword.iskeyword(word) else "launch"


def render(name: str, **fields) -> str:
    text = resources.files("harness").joinpath("templates", f"{name}.tmpl").read_text()
    return Template(text).substitute(**fields)


def fields_for(slug: str, category: str | None, defect: str | None, launcher: str | None,
               title: str | None) -> dict:
    todo = "  # TODO: pick the {} (python -m harness new --help lists them)"
    return {
        "slug": slug,
        "title": title or "TODO: one line that names the trap",
        "category": category or (DEFAULT_CATEGORY if DEFAULT_CATEGORY in CATEGORIES else next(iter(CATEGORIES))),
        "category_note": "" if category else todo.format("category"),
        "defect": defect or (DEFAULT_DEFECT if DEFAULT_DEFECT in DEFECTS else next(iter(DEFECTS))),
        "defect_note": "" if defect else todo.format("defect"),
        "launcher": launcher or default_launcher(slug),
        "behaviours": " | ".join(BEHAVIOURS),
    }


def title_text(title: str | None) -> str | None:
    """``--title`` as case.toml's basic string holds it: one printable line, quotes and backslashes escaped."""
    if title is None:
        return None
    if not title.strip() or not title.isprintable():
        raise ValueError("--title must be one line of printable text")
    return json.dumps(title.strip(), ensure_ascii=False)[1:-1]  # JSON's escapes of '"' and '\\' are TOML's


def check_request(slug: str, root: Path, launcher: str | None) -> None:
    """ValueError (one line) for a slug, folder or launcher ``new`` cannot use."""
    from harness.checks.rules.slug import slug_problems

    if len(slug) > discovery.MAX_SLUG or not SLUG_RE.match(slug):
        raise ValueError(f"'{slug[:40]}{'...' if len(slug) > 40 else ''}' is not a slug: use lowercase words joined by "
                         f"'-', at most {discovery.MAX_SLUG} characters (e.g. softmax-mask-fill-zero)")
    if launcher is not None and (not launcher.isidentifier() or keyword.iskeyword(launcher)):
        raise ValueError(f"--launcher '{launcher}' is not a Python function name")
    if not root.is_dir():
        where = "CASEBOOK_CASES" if os.environ.get("CASEBOOK_CASES") else "the cases folder"
        raise ValueError(f"{where} {root} is not a folder (create it, or point CASEBOOK_CASES at one)")
    if (root / slug).exists():
        raise ValueError(f"{root / slug} already exists")
    clashes = [p.what for p in slug_problems(slug, root)]
    if clashes:
        raise ValueError(clashes[0])


def scaffold(slug: str, root: Path, *, category=None, defect=None, launcher=None, title=None) -> Path:
    """Write ``root/slug`` from the templates, whole or not at all; ValueError (one line) for unusable input."""
    check_request(slug, root, launcher)
    toml_title = title_text(title)
    fields = fields_for(slug, category, defect, launcher, title and title.strip())
    folder = root / slug
    try:
        with fileio.new_folder(folder) as staging:
            for name in REQUIRED_FILES:
                text = render(name, **(dict(fields, title=toml_title) if name == "case.toml" and title else fields))
                (staging / name).write_text(text, encoding="utf-8")
            tomllib.loads((staging / "case.toml").read_text(encoding="utf-8"))  # never a case.toml that is not TOML
    except FileExistsError:
        raise ValueError(f"{folder} already exists") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"the new case.toml would not be valid TOML ({e}); nothing was written") from None
    except OSError as e:
        raise ValueError(f"{folder} not created ({error_line(e)}); nothing was written") from None
    return folder


def run(args) -> int:
    from harness.checks.problem import shown

    try:
        folder = scaffold(args.slug, discovery.cases_dir(), category=args.category, defect=args.defect,
                          launcher=args.launcher, title=args.title)
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(f"created {shown(folder)}/: {', '.join(REQUIRED_FILES)}")
    casetable.refresh_readme()
    print(f"""next:
  1. write the broken kernel in broken.py and the fixed one in fixed.py; fill in every TODO
  2. python -m harness check {args.slug}          # one line per thing left to do
  3. python -m harness case {args.slug} --backend interpreter
  4. python -m harness record {args.slug} --splice-only   # the write-up's code blocks and lint line, README.md's table
  5. python -m harness record {args.slug} --backend interpreter, then python -m pytest
  6. on a machine with a GPU: python -m harness record {args.slug} --backend gpu""")
    return EXIT_OK


def vocabulary(title: str, words: dict) -> str:
    width = max(map(len, words))
    return f"{title}:\n" + "\n".join(f"  {w:<{width}}  {meaning}" for w, meaning in words.items())


def register(sub) -> None:
    p = sub.add_parser(
        "new", help="scaffold a new case folder from the template",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Create cases/<slug>/ with case.toml, case.py, broken.py, fixed.py and README.md. "
                    "It runs at once; 'python -m harness check <slug>' lists what is left to fill in.",
        epilog="\n\n".join([vocabulary("categories", CATEGORIES), vocabulary("defects", DEFECTS),
                            vocabulary("behaviours ([expect] gpu / interpreter)", BEHAVIOURS)]))
    p.add_argument("slug", help="lowercase words joined by '-', naming the bug (softmax-mask-fill-zero)")
    p.add_argument("--category", choices=list(CATEGORIES), metavar="CATEGORY", help="one of the categories below")
    p.add_argument("--defect", choices=list(DEFECTS), metavar="DEFECT", help="one of the defects below")
    p.add_argument("--launcher", help="the launcher's name (default: the slug's first word)")
    p.add_argument("--title", help="one line naming the trap (default: a TODO)")
    p.set_defaults(func=run)
