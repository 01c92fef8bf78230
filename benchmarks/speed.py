"""Wall-clock times of the casebook's everyday commands, from a cold start, written as Markdown.

    python benchmarks/speed.py --out docs/measurements/speed-gpu.md --backend gpu \
        --singles add-missing-mask,nrm2-atomics [--before OLD_CHECKOUT] [--pytest] [--all] [--report]

Every command runs as its own subprocess (so each pays its own imports, as a user's
does), from the repository root it measures (``--before`` another checkout, to time the
code as it was). The output file holds the device and versions, each command line,
its exit status and its wall time, and the last lines of its output. Nobody types
these numbers.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=None)
def device_line() -> str:
    probe = ("import torch, triton, platform\n"
             "d = torch.cuda.get_device_name(0) if torch.cuda.is_available() else f'CPU ({platform.machine()})'\n"
             "print(f'{d}; torch {torch.__version__}, triton {triton.__version__}, Python {platform.python_version()}')")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    return out.stdout.strip() or out.stderr.strip().splitlines()[-1]


def timed(label: str, argv: list[str], cwd: Path, timeout: int, cold: bool = False, timings: str | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(cwd) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    if timings:  # each worker's timeline (harness.run.timings), one file per command
        Path(timings).mkdir(parents=True, exist_ok=True)
        env["CASEBOOK_TIMINGS"] = str(Path(timings) / (re.sub(r"[^\w.-]+", "_", label).strip("_") + ".jsonl"))
    with tempfile.TemporaryDirectory(prefix="speed-triton-cache-") as cache:
        if cold:  # Triton compiles every kernel again, as on a machine that never ran it
            env["TRITON_CACHE_DIR"] = cache
        return _timed(label, argv, cwd, timeout, env)


def _timed(label: str, argv: list[str], cwd: Path, timeout: int, env: dict) -> dict:
    t0 = time.monotonic()
    try:
        r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
        code, tail = r.returncode, (r.stdout + r.stderr).strip().splitlines()[-3:]
    except subprocess.TimeoutExpired:
        code, tail = "timeout", [f"did not finish in {timeout} s"]
    wall = time.monotonic() - t0
    print(f"{label}: {wall:.1f} s (exit {code})", file=sys.stderr, flush=True)
    return {"label": label, "argv": argv, "cwd": cwd, "wall": wall, "code": code, "tail": tail}


def plan(args) -> list[tuple[str, list[str], Path, int]]:
    """The commands in the order they run: ``case --all`` first (the machine at its coldest),
    then each single case, the tests, the report."""
    py, out = sys.executable, []
    trees = [("before", Path(args.before).resolve())] if args.before else [("after", ROOT)]
    for name, tree in trees:
        if name == "after" and args.all:
            out.append((f"{name}: case --all", [py, "-m", "harness", "case", "--all", "--backend", args.backend],
                        tree, args.timeout))
        for slug in slugs(args.singles, tree):
            out.append((f"{name}: case {slug}", [py, "-m", "harness", "case", slug, "--backend", args.backend],
                        tree, args.timeout))
        if name == "after" and args.pytest:
            mark = ["-m", "gpu"] if args.backend == "gpu" else []
            out.append((f"{name}: pytest {' '.join(mark)}".strip(), [py, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                                                      *mark], tree, args.timeout))
        if name == "after":
            for line in args.also:  # any other command, as a user types it
                out.append((f"{name}: {line}", [py, *shlex.split(line)], tree, args.timeout))
        if name == "after" and args.report:
            out.append((f"{name}: report", [py, "-m", "harness", "report", "--record", "--out", args.report_out],
                        tree, args.timeout))
    return out


def slugs(singles: str, tree: Path) -> list[str]:
    """The slugs to time one by one: a comma-separated list, or ``all`` for every case folder."""
    if singles == "all":
        return sorted(p.parent.name for p in (tree / "cases").glob("*/case.toml"))
    return [s for s in singles.split(",") if s]


def markdown(rows: list[dict], args) -> str:
    lines = [f"# Command times ({args.backend})", "", "```",
             f"$ python benchmarks/speed.py {' '.join(sys.argv[1:])}",
             device_line(), datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
             f"host: {platform.node() or '?'}, {os.cpu_count()} CPUs",
             "Triton's kernel cache: " + ("empty for each command (TRITON_CACHE_DIR of its own)"
                                          if args.cold_triton_cache else "as the earlier commands left it"),
             "```", "",
             "| command | tree | wall (s) | exit |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| `{' '.join(r['argv'][1:])}` | {r['label'].split(':')[0]} | {r['wall']:.1f} | {r['code']} |")
    lines += ["", "Last lines of each command's output:", ""]
    for r in rows:
        lines += [f"- {r['label']}:", "", "  ```"] + [f"  {t}" for t in r["tail"]] + ["  ```", ""]
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--backend", choices=["gpu", "interpreter"], default="gpu")
    p.add_argument("--singles", default="", help="slugs to time one by one, comma-separated, or 'all'")
    p.add_argument("--all", action="store_true", help="time case --all")
    p.add_argument("--pytest", action="store_true", help="time the test suite (-m gpu on the GPU)")
    p.add_argument("--report", action="store_true", help="time report --record (every detector, both backends)")
    p.add_argument("--report-out", default="docs", help="the report's --out folder (default docs)")
    p.add_argument("--before", help="time the single-case commands in this other checkout (the code as it was) instead")
    p.add_argument("--timeout", type=int, default=600)
    p.add_argument("--also", action="append", default=[], metavar="'ARGS'",
                   help="time 'python ARGS' too (repeatable), e.g. --also '-m harness probe FILE --backend interpreter'")
    p.add_argument("--timings", metavar="DIR",
                   help="log every worker's timeline here, a file per command (benchmarks/timeline.py reads them)")
    p.add_argument("--cold-triton-cache", action="store_true",
                   help="give each command an empty TRITON_CACHE_DIR: every kernel is compiled again")
    args = p.parse_args()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    rows = []
    for step in plan(args):  # the file is rewritten after each command: a cut-off run keeps what it measured
        rows.append(timed(*step, cold=args.cold_triton_cache, timings=args.timings))
        tmp = Path(args.out).with_suffix(".tmp")
        tmp.write_text(markdown(rows, args))
        tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
