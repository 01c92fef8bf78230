"""The code tables of README.md (what ``harness sanitize`` reports) and docs/detectors.md (every code of the
probe), generated from the detectors' declarations (``Detector.codes``, ``harness.probe.detectors.codes``):
``python -m harness.probe.codes`` prints both blocks, ``--write`` puts them in the two pages (as
``python -m harness.lint.rules`` does lint's rule docs; a test keeps the pages equal to the registry).
"""

from __future__ import annotations

import sys
from pathlib import Path

from harness.core.markdown import generated_block, generated_markers, with_generated
from harness.probe.detectors import codes

REPO = Path(__file__).resolve().parents[2]
# block name -> (the page, how that page links a case's write-up)
PAGES = {"probe-codes": (REPO / "docs" / "detectors.md", "../cases"),
         "sanitize-codes": (REPO / "README.md", "cases")}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _cases(slugs, prefix: str) -> str:
    return ", ".join(f"[{s}]({prefix}/{s}/README.md)" for s in slugs)


def _severity(usual: str, otherwise: str) -> str:
    return f"{usual}; {otherwise}" if otherwise else usual


def probe_table(prefix: str = "../cases") -> str:
    rows = ["| code | severity | what it means | from | cases that teach it |", "|---|---|---|---|---|"]
    for code, (c, by) in codes().items():
        rows.append(f"| {code} | {_cell(_severity(c.severity, c.otherwise))} | {_cell(c.meaning)} | "
                    f"{', '.join(f'`{d}`' if ' ' not in d else d for d in by)} | {_cases(c.cases, prefix)} |")
    return "\n".join(rows)


def sanitize_table(prefix: str = "cases") -> str:
    rows = ["| code | severity | what it means | cases like it |", "|---|---|---|---|"]
    for code, (c, _) in codes().items():
        if c.sanitize:
            flag = f"`{c.flag}`: " if c.flag else ""
            rows.append(f"| {code} | {_cell(_severity(c.sanitize, c.sanitize_otherwise))} | {_cell(flag + c.meaning)} "
                        f"| {_cases(c.cases, prefix)} |")
    return "\n".join(rows)


def block(name: str) -> str:
    """The generated block ``name`` of ``PAGES``, its markers included."""
    begin, end = generated_markers(name)
    prefix = PAGES[name][1]
    body = probe_table(prefix) if name == "probe-codes" else sanitize_table(prefix)
    return f"{begin}\n{body}\n{end}"


def stale() -> list[str]:
    """The pages whose block is not what the registry gives now (or that have none), as one line each."""
    out = []
    for name, (page, _) in PAGES.items():
        now = generated_block(page.read_text(encoding="utf-8"), name)
        if now != block(name):
            out.append(f"{page.relative_to(REPO)}: the block '{name}' "
                       f"{'is missing' if now is None else 'differs from the registry'}")
    return out


def write() -> list[Path]:
    """Put each block in its page (atomically); the pages changed."""
    from harness.core.fileio import write_text

    changed = []
    for name, (page, _) in PAGES.items():
        text = page.read_text(encoding="utf-8")
        new = with_generated(text, name, block(name))
        if new is None:
            raise ValueError(f"{page.relative_to(REPO)}: no {' ... '.join(generated_markers(name))} to fill")
        if new != text:
            write_text(page, new)
            changed.append(page)
    return changed


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        try:
            for page in write():
                print(f"updated {page.relative_to(REPO)}")
        except ValueError as e:
            sys.exit(f"harness.probe.codes: {e}")
    else:
        print("\n\n".join(block(name) for name in PAGES))
