"""The diagnosis ranked again from a board's recorded rows, with the code as it is now: what a change of
``harness/probe/diagnosis.py`` would name first, before any board is run again.

    python benchmarks/rediagnose_rows.py interpreter
    python benchmarks/rediagnose_rows.py gpu+interpreter --all   # every buggy row, not only those that change

A row keeps what its diagnosis was made from (``harness/bugs/board.py``: each finding, and the experiments'
evidence by backend), so the ranking can be tried on the rows alone. It is an approximation of the probe's own
call: the rows do not say at which sizes each experiment took a failure apart, so an experiment's evidence counts
at the default sizes where the sizes its text names are the defaults' (or it names none), else at other sizes;
the defaults are the reference detector's sizes where it failed, else the largest input's sizes the row records.
Where the replay of the unchanged code differs from a recorded row, that approximation is why; compare against a
replay at the earlier commit (``git stash``), not against the rows alone. Prints, for each buggy version whose
first class changes, the entry's half (bugs/split.toml), the class it should name (its bug.toml), and the
recorded and replayed first three.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_AT = re.compile(r"at ((?:\w+=-?\d+(?:, )?)+)")


def halves() -> dict:
    """Entry -> "dev", "test" or "first-run" (bugs/split.toml)."""
    import tomllib

    split = tomllib.loads((ROOT / "bugs" / "split.toml").read_text())
    out = {}
    for half in ("dev", "test", "first_run"):
        for x in split.get(half) or []:
            out[x["entry"] if isinstance(x, dict) else x] = half.replace("_", "-")
    return out


def replay(probe: dict) -> list:
    """The first three defect classes the diagnosis names now for one row's ``probe`` part."""
    from harness.probe.diagnosis import diagnose
    from harness.probe.findings import Finding

    findings = [Finding.from_json(x) for x in probe.get("problems") or []]
    defaults = next((f.sizes for f in findings if f.code == "P201" and f.sizes), None)
    if defaults is None:
        defaults = ((probe.get("given") or {}).get("largest") or {}).get("sizes")
    observed, elsewhere = {}, {}
    for backend, evidence in (probe.get("observed") or {}).items():
        for name, text in evidence.items():
            m = _AT.search(text)
            at = dict(kv.split("=") for kv in m[1].split(", ")) if m else {}
            here = not at or (defaults and all(str(defaults.get(k)) == v for k, v in at.items()))
            (observed if here else elsewhere).setdefault(name, f"{backend}: {text}")
    return [d["defect"] for d in diagnose(findings, observed, elsewhere=elsewhere, defaults=defaults) if d["defect"]][:3]


def main(argv=None) -> int:
    import tomllib

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("backend", choices=("interpreter", "gpu", "gpu+interpreter"))
    ap.add_argument("--all", action="store_true", help="every buggy row, not only those whose first class changes")
    args = ap.parse_args(argv)
    half = halves()
    changed = 0
    for path in sorted((ROOT / "docs" / "bugs" / "rows" / args.backend).glob("*.json")):
        slug = path.stem
        probe = (json.loads(path.read_text()).get("buggy") or {}).get("probe") or {}
        if not probe.get("problems"):
            continue
        want = tomllib.loads((ROOT / "bugs" / slug / "bug.toml").read_text()).get("defect")
        old, new = (probe.get("diagnosis") or [])[:3], replay(probe)
        if old[:1] != new[:1] or args.all:
            changed += old[:1] != new[:1]
            mark = lambda got: "right" if got[:1] == [want] else "wrong"  # noqa: E731
            print(f"{half.get(slug, '?'):9} {slug:55} want {want:22} recorded {mark(old)} {old} -> now {mark(new)} "
                  f"{new}")
    print(f"{changed} buggy rows whose first class changes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
