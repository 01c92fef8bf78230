"""One meaning per flag, and docs that list what there is: every command in README's Commands
table, every case.toml field in CONTRIBUTING's reference, ``list`` within 100 columns."""

import contextlib
import io
import re
from pathlib import Path

from harness import cli
from harness.core import spec

ROOT = Path(__file__).resolve().parents[1]


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start:end]


def test_the_readme_commands_table_has_a_row_for_every_command():
    import argparse

    parser = cli.build_parser()
    commands = sorted(next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices)
    assert {"list", "probe", "lint", "sanitize", "report"} <= set(commands)
    table = _section((ROOT / "README.md").read_text(), "## Commands")
    rows = set(re.findall(r"^\| `python -m harness (\w+)", table, re.M))
    assert rows == set(commands), sorted(set(commands) ^ rows)


def test_contributing_documents_every_case_toml_field_and_table_key():
    ref = _section((ROOT / "CONTRIBUTING.md").read_text(), "### `case.toml`")
    block = ref[ref.index("```toml"):ref.index("```", ref.index("```toml") + 7)]
    keys = set(re.findall(r"^\[?([\w.]+)\]?\s*=?", block, re.M))
    tables = set(re.findall(r"^\[([\w.]+)\]", block, re.M))
    missing = [f for f in spec.FIELDS if f not in keys and f not in tables and not any(t.startswith(f + ".")
                                                                                        for t in tables)]
    missing += [k for k in spec.RUN_KEYS + spec.COMPARE_KEYS + spec.BENCH_KEYS if k not in keys]
    missing += [f"sizes.{b}" for b in spec.SIZE_TABLES if f"sizes.{b}" not in tables]
    assert not missing, missing
    assert "`triggers`" in ref and "`[diagnosis] evidence`" in ref  # and what they mean, beside the block


def _list(*args) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["list", *args]) == 0
    return out.getvalue()


def test_list_fits_100_columns_and_wide_shows_every_column():
    narrow, wide = _list(), _list("--wide")
    assert max(len(line) for line in narrow.splitlines()) <= 100
    assert "nrm2-race" in narrow and "store-race" in narrow and "title" not in narrow.splitlines()[0]
    head = wide.splitlines()[0].split()
    assert "title" in head and "category" in head and "triggers" in head
    assert "the last writer wins" in wide
