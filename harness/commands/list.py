"""``python -m harness list``: every case, with its category and declared behaviour.

Needs neither torch nor triton: it reads only the case.toml files.
"""

from __future__ import annotations

import sys

from tabulate import tabulate

from harness.core import discovery, recorded, table
from harness.core.spec import CATEGORIES, DEFECTS, TRIGGERS
from harness.errors import EXIT_OK, EXIT_USAGE

HEADERS = ["case", "category", "defect", "triggers", "broken on gpu", "broken on interpreter", "title"]


def case_rows(specs, links: bool = False) -> list[list]:
    return [[f"[{s.slug}](cases/{s.slug}/README.md)" if links else s.slug, s.category, s.defect,
             ", ".join(s.triggers), s.expect_text("gpu"), s.expect_text("interpreter"), s.title] for s in specs]


def selected(specs, args) -> list:
    """The cases that match every filter given (--category, --defect, --trigger; each may repeat)."""
    def keep(s):
        return ((not args.category or s.category in args.category) and (not args.defect or s.defect in args.defect)
                and (not args.trigger or set(args.trigger) & set(s.triggers)))
    return [s for s in specs if keep(s)]


def readme_table(specs) -> str:
    return tabulate(case_rows(specs, links=True), headers=HEADERS, tablefmt="github") + "\n"


def update_readme_table(specs) -> bool:
    """Rewrite the table of cases (and the example run) between their markers in README.md."""
    readme = discovery.REPO_ROOT / "README.md"
    example = discovery.cases_dir() / "nrm2-atomics" / "recorded" / "gpu.md"
    if example.is_file():
        recorded.splice(readme, "example", example.read_text())
    return recorded.splice(readme, "cases", readme_table(specs))


def run(args) -> int:
    specs, errors = discovery.load_all()
    if args.update_readme and not errors:
        update_readme_table(specs)
    specs = selected(specs, args)
    if args.json:
        print(table.dumps([{"slug": s.slug, "title": s.title, "category": s.category, "defect": s.defect,
                            "triggers": s.triggers, "summary": s.summary, "expect": s.expect} for s in specs]))
    else:
        print(tabulate(case_rows(specs), headers=HEADERS, tablefmt=args.format))
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    return EXIT_USAGE if errors else EXIT_OK


def register(sub) -> None:
    p = sub.add_parser("list", help="every case, with its category and declared behaviour")
    p.add_argument("--json", action="store_true")
    p.add_argument("--format", default="simple", help="tabulate format (default simple; github for Markdown)")
    p.add_argument("--update-readme", action="store_true", help="rewrite the table of cases in README.md")
    for name, vocab in (("category", CATEGORIES), ("defect", DEFECTS), ("trigger", TRIGGERS)):
        p.add_argument(f"--{name}", action="append", choices=list(vocab), metavar=name.upper(),
                       help=f"only cases with this {name} (repeat for any of several): {', '.join(vocab)}")
    p.set_defaults(func=run)
