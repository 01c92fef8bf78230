"""The CPU suite on "2-core machines" saturated by CPU-bound processes beside it (issue 38).

A test that races the wall clock passes on a quiet machine and fails on a busy one. This
script makes busy 2-core machines out of a larger host: it splits the test files into
``--groups`` groups, runs each group's pytest pinned (``taskset``) to two cores of its own,
and pins ``--burners`` processes that spin forever to the same two cores. With 4 burners
each pytest gets about a third of its two cores, as on CI's 2-core machine with four other
jobs on it. CUDA is hidden (``CUDA_VISIBLE_DEVICES=``): this is the CPU suite.

    python benchmarks/suite_under_load.py --groups 8 --burners 4 --out OUT.md

Every group's pytest summary line goes to ``--out`` with the host, the versions and the
command. Exit 1 when a group failed. The burners are killed at the end, and on Ctrl-C.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from harness.core.fileio import write_text  # noqa: E402  (atomic: an interrupted run leaves no half-written file)
BURN = "while True:\n    pass\n"


def groups(files: list[Path], n: int) -> list[list[Path]]:
    """Test files into ``n`` groups of about equal size (bytes of source: a rough proxy of run time)."""
    out: list[list[Path]] = [[] for _ in range(n)]
    load = [0] * n
    for f in sorted(files, key=lambda p: p.stat().st_size, reverse=True):
        i = load.index(min(load))
        out[i].append(f)
        load[i] += f.stat().st_size
    return [g for g in out if g]


def versions() -> str:
    try:
        import torch
        import triton
        return f"torch {torch.__version__}, triton {triton.__version__}, Python {platform.python_version()}"
    except ImportError as e:
        return f"({e})"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--groups", type=int, default=8)
    p.add_argument("--burners", type=int, default=4)
    p.add_argument("--out", required=True)
    p.add_argument("--timeout", type=float, default=560)
    p.add_argument("tests", nargs="*", help="test files to run (default: every tests/test_*.py)")
    args = p.parse_args(argv)
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2 * args.groups:
        print(f"error: {args.groups} groups need {2 * args.groups} cores; this host has {len(cores)}", file=sys.stderr)
        return 2
    files = sorted((ROOT / "tests").glob("test_*.py"))
    if args.tests:
        wanted = {Path(t).name for t in args.tests}
        unknown = wanted - {f.name for f in files}
        if unknown:
            print(f"error: no such test file: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        files = [f for f in files if f.name in wanted]
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    procs, burners = [], []
    t0 = time.monotonic()
    try:
        for i, group in enumerate(groups(files, args.groups)):
            pair = f"{cores[2 * i]},{cores[2 * i + 1]}"
            burners += [subprocess.Popen(["taskset", "-c", pair, sys.executable, "-c", BURN]) for _ in range(args.burners)]
            cmd = ["taskset", "-c", pair, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   *[str(f.relative_to(ROOT)) for f in group]]
            procs.append((pair, group, subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                                        stderr=subprocess.STDOUT, text=True)))
        rows, failed = [], False
        for pair, group, proc in procs:
            try:
                out, _ = proc.communicate(timeout=max(1.0, args.timeout - (time.monotonic() - t0)))
            except subprocess.TimeoutExpired:
                proc.kill()
                out, _ = proc.communicate()
                out += "\n(timed out)"
            lines = out.strip().splitlines()
            bad = [ln for ln in lines if ln.startswith(("FAILED", "ERROR"))]
            failed |= proc.returncode != 0
            rows.append((pair, group, proc.returncode, lines[-1] if lines else "(no output)", bad))
    finally:
        for b in burners:
            b.kill()
        for _, _, proc in procs:
            if proc.poll() is None:
                proc.kill()
    text = ["# The CPU suite beside CPU-bound burners", "", "```",
            f"$ python benchmarks/suite_under_load.py {' '.join(argv if argv is not None else sys.argv[1:])}",
            versions(), datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            f"host: {len(cores)} CPUs; {len(procs)} groups, each pytest pinned to 2 cores with {args.burners} "
            "burners pinned to the same 2", "```", "",
            "| cores | test files | exit | pytest's last line |", "|---|---|---|---|"]
    for pair, group, rc, last, bad in rows:
        text.append(f"| {pair} | {', '.join(f.name for f in group)} | {rc} | {last} |")
    for pair, group, rc, last, bad in rows:
        if bad:
            text += ["", f"Failures on cores {pair}:", "", "```", *bad, "```"]
    write_text(Path(args.out), "\n".join(text) + "\n")
    print("\n".join(text))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
