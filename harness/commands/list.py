"""``python -m harness list``: every case, with its category and declared behaviour.

Needs neither torch nor triton: it reads only the case.toml files. By default the table fits
``WIDTH`` columns (the case, its defect and what the broken kernel does on each backend, long
cells wrapped); ``--wide`` prints every column (category, triggers, title) in full.
"""

from __future__ import annotations

import sys

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


WIDTH = 100  # columns of the default table
NARROW = ("case", "defect", "broken on gpu", "broken on interpreter")


def narrow_table(specs, fmt: str = "simple", width: int = WIDTH) -> str:
    """The table's case, defect and behaviour columns, the behaviours wrapped so that a line fits ``width``."""
    from tabulate import tabulate  # here, not at the top: lint and --help need only the standard library

    keep = [HEADERS.index(h) for h in NARROW]
    rows = [[r[i] for i in keep] for r in case_rows(specs)]
    heads = ["case", "defect", "gpu", "interpreter"]
    fixed = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads[:2])]
    room = width - sum(fixed) - 2 * (len(heads) - 1) - 1  # two spaces between columns, one to spare
    each = max(len("interpreter"), room // 2)
    return tabulate(rows, headers=heads, tablefmt=fmt, maxcolwidths=[None, None, each, each])


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
    elif args.wide:
        from tabulate import tabulate  # here, not at the top: lint and --help need only the standard library

        print(tabulate(case_rows(specs), headers=HEADERS, tablefmt=args.format))
    else:
        print(narrow_table(specs, args.format))
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    return EXIT_USAGE if errors else EXIT_OK


def register(sub) -> None:
    p = sub.add_parser("list", help="every case, with its category and declared behaviour")
    p.add_argument("--json", action="store_true")
    p.add_argument("--format", default="simple", help="tabulate format (default simple; github for Markdown)")
    p.add_argument("--update-readme", action="store_true", help="rewrite the table of cases in README.md")
    p.add_argument("--wide", action="store_true",
                   help=f"every column in full (category, triggers, title); by default the table fits {WIDTH} columns")
    for name, vocab in (("category", CATEGORIES), ("defect", DEFECTS), ("trigger", TRIGGERS)):
        p.add_argument(f"--{name}", action="append", choices=list(vocab), metavar=name.upper(),
                       help=f"only cases with this {name} (repeat for any of several): {', '.join(vocab)}")
    p.set_defaults(func=run)
