"""``python -m harness list``: every case, with its category and declared behaviour.

Needs neither torch nor triton: it reads only the case.toml files.
"""

from __future__ import annotations

import sys

from tabulate import tabulate

from harness.core import casetable, discovery, table
from harness.core.casetable import HEADERS, case_rows
from harness.core.spec import CATEGORIES, DEFECTS, TRIGGERS
from harness.errors import EXIT_OK, EXIT_USAGE, UsageError


def selected(specs, args) -> list:
    """The cases that match every filter given (--category, --defect, --trigger; each may repeat)."""
    def keep(s):
        return ((not args.category or s.category in args.category) and (not args.defect or s.defect in args.defect)
                and (not args.trigger or set(args.trigger) & set(s.triggers)))
    return [s for s in specs if keep(s)]


def run(args) -> int:
    root = discovery.cases_dir()
    if not root.is_dir():  # an empty table would look like a casebook with no cases
        import os

        named = " (CASEBOOK_CASES)" if os.environ.get("CASEBOOK_CASES") else ""
        raise UsageError(f"list: no cases folder at {root}{named}")
    specs, errors = discovery.load_all()
    if args.update_readme and errors:
        print("warning: README.md not updated: some case folders are malformed (below)", file=sys.stderr)
    elif args.update_readme and not casetable.is_the_casebook():
        print("warning: README.md not updated: it lists the repository's cases, not CASEBOOK_CASES'",
              file=sys.stderr)
    elif args.update_readme:
        casetable.update_readme(specs)
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
