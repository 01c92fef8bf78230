"""Which sentinel the sentinel detector (harness/probe/detectors/sentinel.py, P209) finds the contract naming, or
why none, on every case's broken and fixed kernel and on bugs/'s dev and first-run entries (never the test half:
bugs/split.toml keeps it blind). Each file is loaded and its reference run once on the default inputs, in a process
of its own under the interpreter (``sentinels``, as the detector's skip rule does); no kernel is launched.

    CASEBOOK_BUG_CACHE=... python benchmarks/sentinel_contract.py > docs/measurements/sentinel-contract-cpu.md

Prints a markdown table, headed by the machine, the versions and the commit.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ONE = """
import json, os, sys
sys.path.insert(0, {root!r})
from harness.probe import execute as X, target as T
from harness.probe.detectors import sentinel
try:
    t = T.load({path!r}, inputs={inputs!r}, launcher={launcher!r}, backend="interpreter")
    found, why = sentinel.sentinels(t, X.make(t, t.sizes, 0, "interpreter"))
    print("RESULT " + json.dumps({{"found": [[k, v] for k, v, _ in found], "why": why}}))
except Exception as e:  # a case the interpreter does not run (its [expect] skip), a file that does not load
    print("RESULT " + json.dumps({{"error": f"{{type(e).__name__}}: {{e}}"[:160]}}))
"""


def one(path: str, inputs: str | None, launcher: str) -> dict:
    env = dict(os.environ, TRITON_INTERPRET="1")
    p = subprocess.run([sys.executable, "-c", ONE.format(root=str(ROOT), path=path, inputs=inputs, launcher=launcher)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    return json.loads(lines[-1][7:]) if lines else {"error": (p.stderr.strip().splitlines() or ["no output"])[-1][:160]}


def rows():
    for folder in sorted((ROOT / "cases").iterdir()):
        if (folder / "case.toml").is_file():
            launcher = tomllib.loads((folder / "case.toml").read_text())["launcher"]
            for variant in ("fixed", "broken"):
                yield f"case {folder.name} ({variant})", one(str(folder / f"{variant}.py"), str(folder / "case.py"),
                                                             launcher)
    split = tomllib.loads((ROOT / "bugs" / "split.toml").read_text())
    entries = [("dev", n) for n in split["dev"]] + [("first-run", e["entry"]) for e in split["first_run"]
                                                   if "dropped" not in e]
    for part, name in entries:
        for variant in ("fixed", "buggy"):
            yield f"{part} {name} ({variant})", one(str(ROOT / "bugs" / name / "probe.py"), None, f"launch_{variant}")


def main() -> None:
    import torch
    import triton

    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    print(f"# The contract's sentinel, per kernel (benchmarks/sentinel_contract.py)\n\n{platform.node()}: "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}, torch {torch.__version__}, triton "
          f"{triton.__version__}, commit {rev.strip()}\n")
    print("| kernel | sentinel the contract names (input, value) | else why none |\n|---|---|---|")
    for what, got in rows():
        found = ", ".join(f"'{k}' {v}" for k, v in got.get("found", []))
        print(f"| {what} | {found} | {got.get('why') or got.get('error') or ''} |", flush=True)


if __name__ == "__main__":
    main()
