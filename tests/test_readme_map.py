"""README's map holds the harness as it is: the Layout names every package of harness/, and
the Commands table has a row for every command ``python -m harness`` takes."""

import re
from pathlib import Path

from harness.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[1]


def _section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"README.md has no section {title!r}"
    return m.group(1)


def test_the_layout_names_every_package_of_the_harness():
    layout = _section("Layout").split("\nharness/", 1)[1].split("\ndocs/", 1)[0]  # harness/'s own entry
    packages = sorted(p.name for p in (ROOT / "harness").iterdir() if p.is_dir() and not p.name.startswith(("_", "."))
                      and any(p.iterdir()))
    missing = [p for p in packages if not re.search(rf"\b{p}/", layout)]
    assert len(packages) > 8 and not missing, f"README.md's Layout omits harness/{missing}"


def test_the_commands_table_has_a_row_for_every_command():
    rows = [line for line in _section("Commands").splitlines() if line.startswith("| `python -m harness ")]
    named = {line.split("`python -m harness ")[1].split()[0].rstrip("`") for line in rows}
    assert set(COMMANDS) <= named, f"README.md's Commands table lacks {sorted(set(COMMANDS) - named)}"
