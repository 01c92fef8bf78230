"""Where a command's seconds went, from the worker timings the harness logged.

    CASEBOOK_TIMINGS=/tmp/t.jsonl python -m harness report --record
    python benchmarks/timeline.py /tmp/t.jsonl [--out docs/measurements/timeline.md]   (or a .jsonl.gz)

Each line of the log is one worker process (``harness.run.timings``). This groups them
by what they were for (the case's main run, or a detector's run) and backend, and
splits each process's wall time into phases from the worker's own events:

- start-up: from the harness starting the process to torch and Triton imported;
- device: from there to the device known (on a GPU: CUDA initialised);
- setup: to the first variant's start (the case's module loaded);
- run: the variants, compiling included (``compiled`` marks, trials);
- exit: from the last event to the process's end (tear-down, a sanitizer's summary).

The columns are sums of process-seconds (worker CPU-s: the workers' own CPU time, all
threads, a wrapper's not included): processes run side by side, so they add up to
more than the command's wall time; the share of each row says where to cut.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

PHASES = ("start-up", "device", "setup", "run", "exit")


def phases(line: dict) -> dict:
    """The five phases of one process, in seconds (a phase its events do not show is 0)."""
    marks = {}
    for name, _variant, t in line.get("marks", []):
        marks.setdefault(name, t)
    last = max((t for _n, _v, t in line.get("marks", [])), default=None)
    wall = line["wall"]
    imported = marks.get("imported", marks.get("env", last if last is not None else wall))
    env = marks.get("env", imported)
    start = marks.get("start", env)
    end = last if last is not None else wall
    return {"start-up": imported, "device": max(0.0, env - imported), "setup": max(0.0, start - env),
            "run": max(0.0, end - start), "exit": max(0.0, wall - end)}


def kind(line: dict) -> str:
    how = "forked" if line.get("forked") else "fresh process"
    tool = f", {line['wrapper']} {line['tool'] or ''}".rstrip() if line.get("wrapper") else ""
    return f"{line['purpose']} ({line['backend']}, {how}{tool})"


def summary(lines: list[dict]) -> str:
    groups: dict[str, list[dict]] = defaultdict(list)
    for line in lines:
        groups[kind(line)].append(line)
    total = sum(x["wall"] for x in lines) or 1.0
    rows = []
    for name, ls in sorted(groups.items(), key=lambda kv: -sum(x["wall"] for x in kv[1])):
        ph = [phases(x) for x in ls]
        walls = [x["wall"] for x in ls]
        cpu = [x["cpu"] for x in ls if isinstance(x.get("cpu"), (int, float))]
        rows.append([name, len(ls), f"{sum(walls):.0f}", f"{sum(cpu):.0f}" if cpu else "", f"{100 * sum(walls) / total:.0f}%",
                     f"{statistics.median(walls):.1f}", f"{max(walls):.1f}"]
                    + [f"{sum(p[k] for p in ph):.0f}" for k in PHASES])
    head = ["runs for", "processes", "process-s", "worker CPU-s", "share", "median s", "max s"] + [f"{p} s" for p in PHASES]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    slow = sorted(lines, key=lambda x: -x["wall"])[:10]
    out += ["", "Slowest processes:", "", "| case | runs for | backend | wall s | " + " | ".join(PHASES) + " |",
            "|---|---|---|---|" + "---|" * len(PHASES)]
    for x in slow:
        p = phases(x)
        out.append(f"| {x['case']} | {x['purpose']} | {x['backend']}{', forked' if x.get('forked') else ''} | "
                   f"{x['wall']:.1f} | " + " | ".join(f"{p[k]:.1f}" for k in PHASES) + " |")
    return "\n".join(out) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("log", help="the CASEBOOK_TIMINGS file")
    p.add_argument("--out", help="write the Markdown here too")
    args = p.parse_args()
    lines = []
    path = Path(args.log)
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    for raw in text.splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            continue
    if not lines:
        print(f"error: no timings in {args.log}", file=sys.stderr)
        return 2
    starts = [x["started"] for x in lines if "started" in x]
    span = (f", from the first start to the last end {max(x['started'] + x['wall'] for x in lines if 'started' in x) - min(starts):.0f} s"
            if starts else "")
    text = (f"{len(lines)} worker processes, {sum(x['wall'] for x in lines):.0f} process-seconds{span}\n\n"
            + summary(lines))
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
