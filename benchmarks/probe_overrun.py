"""How far past its budget each probe ends: ``harness probe`` run as a user runs it, one command at a time.

    python benchmarks/probe_overrun.py [--backend all|gpu|interpreter] [--budget SECONDS] FILE[:LAUNCHER] ...

For each FILE (with its launcher, default ``launch``) it runs ``python -m harness probe FILE --launcher
LAUNCHER --backend B [--budget S] --json -q`` in a fresh process and prints one row: the command's wall
seconds (its start to its end, Python's start and imports included), the budget the probe says it had,
how far past it the command ended, the probe's own seconds (from its ``probe()`` call), the seconds from
the last worker process's end to the command's end (``CASEBOOK_TIMINGS``: what the parent does after
the workers, the report, lint, the diagnosis, and its own exit), the exit status, and each detector
that was cut, skipped or not run for lack of time. The header names the machine and its load
average, which a shared machine's numbers depend on. A measurement, not a test: nothing here asserts
a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def machine() -> str:
    """The device the probe's GPU side runs on (or the CPU), and the versions."""
    try:
        import torch
        import triton

        dev = torch.cuda.get_device_name(0) if torch.cuda.is_available() else f"CPU ({platform.machine()}, " \
                                                                                 f"{os.cpu_count()} cores)"
        return f"{dev}; torch {torch.__version__}, triton {triton.__version__}, Python {platform.python_version()}"
    except Exception as e:  # noqa: BLE001  a measurement names what it can
        return f"unknown device ({type(e).__name__})"


def short(status: str) -> bool:
    """A detector's status that says the budget ended before its answer."""
    return status.startswith("cut") or "budget" in status or status == "not run"


def default_budget(backend: str) -> float:
    """The probe's --budget default for ``backend`` as the command resolves it."""
    sys.path.insert(0, str(ROOT))
    from harness.probe.budget import Budget
    from harness.run.backends import resolve_backends

    return Budget.default_seconds(resolve_backends(backend))


def one(item: str, backend: str, budget: float | None, repo: Path = ROOT) -> dict:
    file, _, launcher = item.partition(":")
    with tempfile.TemporaryDirectory(prefix="casebook-overrun-") as tmp:
        timings = os.path.join(tmp, "timings.jsonl")
        cmd = [sys.executable, "-m", "harness", "probe", file, "--launcher", launcher or "launch", "--backend",
               backend, "--json", "-q"] + (["--budget", f"{budget:g}"] if budget is not None else [])
        load = os.getloadavg()[0]
        t0 = time.time()
        proc = subprocess.run(cmd, cwd=repo, env={**os.environ, "CASEBOOK_TIMINGS": timings}, capture_output=True,
                              text=True)
        t1 = time.time()
        workers = []
        if os.path.exists(timings):
            with open(timings) as f:
                workers = [json.loads(line) for line in f if line.strip()]
    try:
        report = json.loads(proc.stdout)
    except ValueError:
        report = {}
    last = max((w["started"] + w["wall"] for w in workers), default=None)
    ran = report.get("ran", [])
    return {"item": f"{Path(file).parent.name}/{Path(file).name}:{launcher or 'launch'}", "load": load,
            "wall": t1 - t0, "budget": report.get("budget", budget if budget is not None else default_budget(backend)), "seconds": report.get("seconds"),
            "after_workers": None if last is None else t1 - last, "exit": proc.returncode,
            "short": [f"{r['backend']} {r['detector']}: {r['status']}" for r in ran if short(r["status"])],
            "error": proc.stderr.strip().splitlines()[-1] if proc.returncode and proc.stderr.strip() else ""}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("items", nargs="+", metavar="FILE[:LAUNCHER]")
    p.add_argument("--backend", default="all", choices=["all", "gpu", "interpreter"])
    p.add_argument("--budget", type=float, default=None, help="--budget for each probe (default: the probe's own)")
    p.add_argument("--repo", type=Path, default=ROOT, help="the checkout whose harness runs (default: this one; "
                                                           "FILEs are relative to it)")
    args = p.parse_args(argv)
    commit = subprocess.run(["git", "-C", str(args.repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "(not a git checkout)"
    print(f"# probe_overrun: {machine()}; {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; harness of "
          f"{args.repo.name} at {commit}")
    print(f"`python benchmarks/probe_overrun.py --backend {args.backend}"
          f"{'' if args.budget is None else f' --budget {args.budget:g}'} {' '.join(args.items)}`\n")
    print("| item | load avg (1 min) at start | budget | command wall s | past the budget s | probe s | "
          "after the last worker s | exit | cut, skipped or not run for the budget |")
    print("|---|---|---|---|---|---|---|---|---|")
    for item in args.items:
        r = one(item, args.backend, args.budget, args.repo)
        b = r["budget"]
        over = "" if not b else f"{r['wall'] - b:+.2f}"
        after = "" if r["after_workers"] is None else f"{r['after_workers']:.2f}"
        secs = "" if r["seconds"] is None else f"{r['seconds']:.2f}"
        what = "; ".join(r["short"]) or r["error"]
        print(f"| {r['item']} | {r['load']:.1f} | {b} | {r['wall']:.2f} | {over} | {secs} | {after} | {r['exit']} | "
              f"{what} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
