"""``python -m harness new <slug>``: a new case folder, from the templates in ``harness/templates``.

The new case runs at once (its kernels are a correct copy kernel), and ``check``
fails it, one line per TODO, until it is filled in: its broken kernel does not yet
do what ``case.toml`` declares.
"""

from __future__ import annotations

import argparse
import keyword
from importlib import resources
from pathlib import Path
from string import Template

from harness.core import discovery
from harness.errors import EXIT_OK, UsageError
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


def scaffold(slug: str, root: Path, *, category=None, defect=None, launcher=None, title=None) -> Path:
    """Write ``root/slug`` from the templates; ValueError (one line) if the slug is unusable."""
    from harness.checks.rules.slug import slug_problems

    if not SLUG_RE.match(slug):
        raise ValueError(f"'{slug}' is not a slug: use lowercase words joined by '-' (e.g. softmax-mask-fill-zero)")
    if launcher is not None and (not launcher.isidentifier() or keyword.iskeyword(launcher)):
        raise ValueError(f"--launcher '{launcher}' is not a Python function name")
    if '"' in (title or "") or "\\" in (title or ""):
        raise ValueError("--title may not contain '\"' or '\\' (write it in case.toml instead)")
    folder = root / slug
    if folder.exists():
        raise ValueError(f"{folder} already exists")
    clashes = [p.what for p in slug_problems(slug, root)]
    if clashes:
        raise ValueError(clashes[0])
    fields = fields_for(slug, category, defect, launcher, title)
    folder.mkdir(parents=True)
    for name in REQUIRED_FILES:
        (folder / name).write_text(render(name, **fields))
    return folder


def run(args) -> int:
    from harness.checks.problem import shown

    try:
        folder = scaffold(args.slug, discovery.cases_dir(), category=args.category, defect=args.defect,
                          launcher=args.launcher, title=args.title)
    except ValueError as e:
        raise UsageError(str(e)) from None
    print(f"created {shown(folder)}/: {', '.join(REQUIRED_FILES)}")
    print(f"""next:
  1. write the broken kernel in broken.py and the fixed one in fixed.py; fill in every TODO
  2. python -m harness check {args.slug}          # one line per thing left to do
  3. python -m harness case {args.slug} --backend interpreter
  4. python -m pytest -k {args.slug}
  5. on a machine with a GPU: python -m harness record {args.slug} --backend gpu""")
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
