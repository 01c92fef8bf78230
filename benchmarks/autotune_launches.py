"""How many fresh autotunings ``case --all --backend gpu`` makes, case by case, counted on the CPU.

    python benchmarks/autotune_launches.py [--before REV] [--cases a,b] [--out FILE]

A case's worker clears every autotuner's cache before each trial (``harness.run.worker``:
each trial's first call tunes again, as a fresh process would), and before a padding re-run
(a non-finite result). So the tunings of a case are its variants times its GPU trials, times
the tunings one trial's calls make (a launcher may call two kernels, or one at two keys), plus
its padding re-runs; each tuning benchmarks every config that pruning keeps, and on the GPU each
config's ``do_bench`` takes about 0.11 s of the GPU (docs/measurements/autotune-cost-h200.txt),
whatever runs beside it: workers take those benchmarks in turns (``triton_compat.in_turns``).

This counts them by running each autotuned case (a variant file that uses ``triton.autotune``)
the way ``case`` runs it, under ``TRITON_INTERPRET=1``, with the case's GPU trial count:
under the interpreter the autotuner benchmarks too (``triton_compat.patched`` gives it
``do_bench_cpu``, do_bench's algorithm on the host clock), and every benchmarked config is one
entry of the trial's ``bench_calls``. The interpreter's sizes, not the GPU's (the count of
configs does not depend on them for these cases; the launches per config do: they follow the
timing). ``--before REV``: also with the GPU trial counts the case files had at git revision REV.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CONFIG_S = 0.111  # one config's do_bench on an NVIDIA H200 (docs/measurements/autotune-cost-h200.txt)


def autotuned(spec) -> bool:
    """Whether a variant file of the case uses ``triton.autotune``."""
    return any("triton.autotune" in (spec.path / f"{v}.py").read_text() for v in spec.variants)


def gpu_trials_at(rev: str, spec) -> int | None:
    """The case's GPU trial count as case.toml had it at ``rev`` (None: no case.toml there)."""
    from harness.core.spec import DEFAULT_TRIALS

    rel = (spec.path / "case.toml").relative_to(ROOT)
    got = subprocess.run(["git", "show", f"{rev}:{rel.as_posix()}"], cwd=ROOT, capture_output=True, text=True)
    if got.returncode != 0:
        return None
    trials = tomllib.loads(got.stdout).get("run", {}).get("trials", DEFAULT_TRIALS["gpu"])
    return trials.get("gpu", DEFAULT_TRIALS["gpu"]) if isinstance(trials, dict) else trials


def count(spec, trials: int) -> dict:
    """One run of every variant under the interpreter with ``trials`` trials: what it tuned."""
    from harness.run.isolate import run_variants
    from harness.run.scheduler import run_order

    runs = run_variants(spec, run_order(spec.variants), "interpreter", trials=trials, seed=0)
    tuned = [t for r in runs.values() for t in r.trials if t.bench_calls]
    return {"trials": trials, "variants": len(runs), "status": sorted({r.status for r in runs.values()}),
            "tuned_calls": len(tuned), "configs": sum(len(t.bench_calls) for t in tuned),
            "launches": sum(sum(t.bench_calls) for t in tuned),
            "reruns": sum(len(r.probes) for r in runs.values())}


def row(slug: str, label: str, c: dict) -> str:
    status = ", ".join(c["status"])
    return (f"| {slug} | {label} | {c['variants']} | {c['trials']} | {c['tuned_calls']} | {c['reruns']} | "
            f"{c['configs']} | {c['launches']} | {c['configs'] * CONFIG_S:.1f} | {status} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", metavar="REV", help="also count with the GPU trials of the case files at this git revision")
    p.add_argument("--cases", help="comma-separated slugs (default: every case with an autotuned variant)")
    p.add_argument("--out", help="also write the Markdown table to this file")
    args = p.parse_args(argv)
    os.environ["TRITON_INTERPRET"] = "1"
    from harness.core import discovery, fileio

    specs, errors = discovery.load_all()
    for e in errors:  # a malformed case folder: said, and the others counted
        print(f"warning: {e}", file=sys.stderr)
    if args.cases:
        wanted = args.cases.split(",")
        if unknown := sorted(set(wanted) - {s.slug for s in specs}):
            print(f"error: no such case: {', '.join(unknown)}", file=sys.stderr)
            return 2
        specs = [s for s in specs if s.slug in wanted]
    specs = [s for s in specs if autotuned(s)]
    rev = ""
    if args.before:
        got = subprocess.run(["git", "rev-parse", "--short", args.before], cwd=ROOT, capture_output=True, text=True)
        if got.returncode != 0:
            print(f"error: --before {args.before}: not a git revision here", file=sys.stderr)
            return 2
        rev = got.stdout.strip()
    here = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    lines = [f"Fresh autotunings of `case --all --backend gpu`, counted under TRITON_INTERPRET=1 "
             f"(benchmarks/autotune_launches.py{' --before ' + rev if rev else ''}; code {here}"
             f"{', uncommitted changes' if _dirty() else ''}).", "", "```", _versions(), "```", "",
             "| case | trials from | variants | GPU trials | tuned calls | padding re-runs (each tunes again) | configs benchmarked in the tuned calls | "
             "benchmark launches (interpreter) | GPU s at 0.111 s a config | runs |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    totals: dict = {}
    for spec in specs:
        plans = [("now", spec.trials["gpu"])]
        if rev and (old := gpu_trials_at(rev, spec)) is not None:
            plans.insert(0, (rev, old))
        done: dict = {}
        for label, trials in plans:
            c = done.get(trials) or count(spec, trials)
            done[trials] = c
            lines.append(row(spec.slug, label, c))
            print(lines[-1], flush=True)
            t = totals.setdefault(label, {"configs": 0, "tuned_calls": 0, "reruns": 0})
            for k in t:
                t[k] += c[k]
    lines.append("")
    for label, t in totals.items():
        lines.append(f"- {label}: {t['tuned_calls']} tuned calls, {t['reruns']} padding re-runs, "
                     f"{t['configs']} config benchmarks, about {t['configs'] * CONFIG_S:.1f} s of the GPU")
    text = "\n".join(lines) + "\n"
    print("\n".join(lines[-len(totals):]))
    if args.out:
        fileio.write_text(Path(args.out), text)
    return 0


def _versions() -> str:
    import datetime
    import platform

    import torch
    import triton

    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"CPU ({platform.machine()}, {os.cpu_count()} CPUs), TRITON_INTERPRET=1; torch {torch.__version__}, "
            f"triton {triton.__version__}, Python {platform.python_version()}; {when}")


def _dirty() -> bool:
    got = subprocess.run(["git", "status", "--porcelain", "--", "cases", "harness"], cwd=ROOT, capture_output=True,
                         text=True)
    return bool(got.stdout.strip())


if __name__ == "__main__":
    sys.exit(main())
