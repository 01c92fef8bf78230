"""The table of cases: ``list`` prints it, and README.md holds it between ``<!-- cases -->`` markers.

``update_readme`` rewrites README.md's copy. ``list --update-readme`` calls it, and so do
the commands that change what the table shows (``new``, which adds a row, and
``record``, run once a case's case.toml is filled in), so adding a case the way
CONTRIBUTING.md says leaves README.md current; ``tests/test_harness.py`` checks it.
"""

from __future__ import annotations

import sys

from harness.core import discovery, fileio, recorded
from harness.errors import error_line

HEADERS = ["case", "category", "defect", "triggers", "broken on gpu", "broken on interpreter", "title"]


def case_rows(specs, links: bool = False) -> list[list]:
    return [[f"[{s.slug}](cases/{s.slug}/README.md)" if links else s.slug, s.category, s.defect,
             ", ".join(s.triggers), s.expect_text("gpu"), s.expect_text("interpreter"), s.title] for s in specs]


def readme_table(specs) -> str:
    from tabulate import tabulate  # here, not at the top: lint and --help need only the standard library
    return tabulate(case_rows(specs, links=True), headers=HEADERS, tablefmt="github") + "\n"


def is_the_casebook() -> bool:
    """Whether the cases are the repository's own (not a folder of your own in CASEBOOK_CASES)."""
    return discovery.cases_dir() == (discovery.REPO_ROOT / "cases").resolve()


def update_readme(specs=None) -> bool:
    """Rewrite README.md's table of cases (every well-formed case when ``specs`` is None), atomically.

    True when README.md changed. Nothing changes when the cases are not the repository's
    own or README.md has no table; OSError when it cannot be written.
    """
    readme = discovery.REPO_ROOT / "README.md"
    if not is_the_casebook() or not readme.is_file():
        return False
    if specs is None:
        specs, _ = discovery.load_all()
    text = new = readme.read_text(encoding="utf-8")
    example = discovery.cases_dir() / "nrm2-atomics" / "recorded" / "gpu.md"
    if example.is_file():
        new = recorded.spliced(new, "example", example.read_text(encoding="utf-8")) or new
    new = recorded.spliced(new, "cases", readme_table(specs)) or new
    if new == text:
        return False
    fileio.write_text(readme, new)
    return True


def refresh_readme() -> None:
    """``update_readme`` for a command that changed a case: a line when README.md changed, a warning when it could not."""
    try:
        if update_readme():
            print("README.md: its table of cases updated")
    except (OSError, UnicodeDecodeError) as e:
        print(f"warning: README.md: its table of cases not updated ({error_line(e)}); "
              "python -m harness list --update-readme rewrites it", file=sys.stderr)
