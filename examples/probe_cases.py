"""Probe every case's broken and fixed kernel and write the table (docs/probe-cases.md on the CPU).

    python examples/probe_cases.py                 # every case that runs on the interpreter
    python examples/probe_cases.py nrm2-race ...   # some cases, printed, docs/ untouched
    python examples/probe_cases.py --update nrm2-race ...  # re-run some, keep the other rows
    python examples/probe_cases.py --record nrm2-race ...  # also write recorded/probe-<backend>.json (the report's)
    python examples/probe_cases.py --backend gpu --jobs 8 --out probe-gpu.md   # on a GPU machine
    python examples/probe_cases.py --backend gpu+interpreter --merge DIR --out docs/probe-cases-with-gpu.md
        # one table from per-case tables (each case run alone with --out DIR/<slug>.md), no run

For each case: ``harness.probe(cases/<slug>/broken.py, inputs=cases/<slug>/case.py)``
and the same for fixed.py. A broken kernel is *caught* when the probe reports an
error (wrong now on some backend and size); an error on the fixed kernel is a *false
alarm*; warnings (behaviour Triton leaves undefined that the kernel relies on) are listed
apart. The diagnosis is *right* when its first entry names the case or its defect class. Information findings on the fixed kernel (for example order-dependent
rounding of a float atomic sum in a case that declares ``deterministic = false``) are
listed apart.

``--backend gpu`` runs the GPU detectors (the reference, special values, guard bands, layouts,
shape fuzzing, repeat and first calls at the case's GPU sizes; with ``--tools
compute-sanitizer,triton-debug``, opt-in tools, compute-sanitizer memcheck and TRITON_DEBUG=1 at
its small sizes) on every case whose GPU run is not ``skip``,
``--jobs`` cases at once (each runs up to two detector processes). The cases declared
slow (a GPU timeout of 600 s: tensors past 2**31 elements) run one at a time in a
lane of their own, with the reference and guard detectors and the GPU tools only. A
case that needs more GPUs than the machine has is a row saying so. ``--out FILE``
writes the table there (docs/probe-cases.md is the interpreter's default; the GPU
has none: without --out its rows are only printed).
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import probe  # noqa: E402
from harness.core import discovery  # noqa: E402

OUT = ROOT / "docs" / "probe-cases.md"
NOTES = ROOT / "examples" / "probe-cases-notes.md"  # the misses and false alarms explained, appended
FUZZ_TRIALS = 12
GPU_FUZZ_TRIALS = 8
HEAVY_DETECTORS = ["reference", "guards", "compute-sanitizer", "triton-debug"]


WITH_GPU = "gpu+interpreter"  # one probe of both backends at once: probe's default on a machine with a GPU


def heavy(spec, backend: str) -> bool:
    """A case declared slow on the GPU (tensors past 2**31 elements): one at a time, fewer detectors
    (with a GPU: on the GPU alone)."""
    return backend.startswith("gpu") and spec.timeout["gpu"] >= 600


def backends_of(spec, backend: str) -> list:
    """The backends a case is probed on: ``gpu+interpreter`` is each of the two it runs on."""
    if backend != WITH_GPU:
        return [backend]
    if heavy(spec, backend):
        return ["gpu"]
    return [b for b in ("gpu", "interpreter") if runs_on(spec, b)]


def probe_case(spec, variant: str, backend: str = "interpreter", fuzz_trials: int = FUZZ_TRIALS, only=None):
    timeouts = []
    for b in backends_of(spec, backend):
        if b == "gpu":  # a hang on the GPU waits for the whole timeout: the hang case's own is short
            timeouts.append(20 if spec.timeout["gpu"] < 60 else 180 if heavy(spec, b) else 60)
            only = only or (HEAVY_DETECTORS if heavy(spec, b) else None)
        else:
            timeouts.append(30 if spec.timeout["interpreter"] < 60 else 90)
    if only is None and TOOLS:  # --tools: the defaults and the tools named (a slow case's own list keeps its own)
        only = default_detectors(backend) + TOOLS
    return probe(str(spec.path / f"{variant}.py"), inputs=str(spec.path / "case.py"), launcher=spec.launcher,
                 backends=backends_of(spec, backend), detectors=only, options={"fuzz_trials": fuzz_trials},
                 timeout=max(timeouts))


def default_detectors(backend: str) -> list:
    """What the probe runs by default on ``backend`` (each of gpu+interpreter's): every detector but the opt-in
    tools (``--tools`` adds those named)."""
    from harness.probe import detectors

    reg = detectors.registry()
    names = []
    for b in (["gpu", "interpreter"] if backend == WITH_GPU else [backend]):
        names += [d for batch in detectors.batches(b) for d in batch if reg[d].tool is None and d not in names]
    return names


def detectors_of(findings) -> str:
    names = []
    for f in findings:
        tag = f"{f.detector} ({f.code})"
        if tag not in names:
            names.append(tag)
    return ", ".join(names)


def record(spec, broken, fixed, command: str) -> None:
    """cases/<slug>/recorded/probe-<backend>.json for the report (``--record``), one per backend probed."""
    from harness.core import fileio
    from harness.probe.findings import dumps
    from harness.run.worker import environment

    for backend in sorted({r[0] for r in broken.ran} | {r[0] for r in fixed.ran} | set(broken.meta)):
        rec = {"case": spec.slug, "backend": backend, "env": environment(backend), "sources": SOURCES[spec.slug],
               "broken": [f.to_json() for f in broken.findings if f.backend == backend],
               "fixed": [f.to_json() for f in fixed.findings if f.backend == backend], "command": command,
               "ran": {v: {d: st for b, d, _, st in rep.ran if b == backend}
                       for v, rep in (("broken", broken), ("fixed", fixed))}}  # each detector's status: the report
        # tells a detector that found nothing from one this record never ran (columns.probe_cell)
        if why := broken.meta.get(backend, {}).get("unavailable"):
            rec["unavailable"] = why
        p = fileio.write_text(spec.path / "recorded" / f"probe-{backend}.json", dumps(rec) + "\n")
        print(f"wrote {p.relative_to(ROOT)}", flush=True)


SOURCES: dict = {}  # --record: slug -> the sha256 of the case's files when its probe began


def row(spec, backend: str = "interpreter", fuzz_trials: int = FUZZ_TRIALS, only=None) -> tuple[list, float]:
    t0 = time.monotonic()
    if RECORD:
        from harness.core.recorded import source_hashes

        SOURCES[spec.slug] = source_hashes(spec.path)
    link = f"[{spec.slug}](../cases/{spec.slug}/README.md)"
    broken = probe_case(spec, "broken", backend, fuzz_trials, only)
    if why := broken.meta.get(backends_of(spec, backend)[0], {}).get("unavailable"):  # a case that needs two GPUs, on one
        if RECORD:
            record(spec, broken, broken, f"python examples/probe_cases.py --record --backend {backend} {spec.slug}")
        return [link, spec.defect, f"not run: {why}", "", "", "", "", "", ""], time.monotonic() - t0
    fixed = probe_case(spec, "fixed", backend, fuzz_trials, only)
    if JSON_DIR:  # each probe's whole report (--json-dir), to read the findings and evidence behind a row
        import json

        from harness.core import fileio

        for variant, rep in (("broken", broken), ("fixed", fixed)):
            fileio.write_text(Path(JSON_DIR) / f"{spec.slug}-{variant}.json", json.dumps(rep.to_json(), indent=1,
                                                                                       default=str) + "\n")
    if RECORD:
        flag = f" --backend {backend}" if backend != "interpreter" else ""
        record(spec, broken, fixed, f"python examples/probe_cases.py --record{flag} {spec.slug}")
    hidden = all(x == "hidden" for b in backends_of(spec, backend) for x in spec.expect[b])  # it cannot show here
    caught = "yes" if broken.errors else ("calibration: quiet, as it should be" if spec.calibration
                                          else f"no (hidden on {backend}: the bug does not show here)" if hidden
                                          else "**no**")
    notes = [f for f in fixed.findings if f not in fixed.problems]
    first = broken.diagnosis[0] if broken.diagnosis else None
    named = (f"{first['defect'] or first['title']}" + (f" ({first['case']})" if first["case"] else "")) if first else ""
    right = "" if not broken.errors else "yes" if first and (first["case"] == spec.slug or
                                                              first["defect"] == spec.defect) else "**no**"
    return [link, spec.defect, caught, detectors_of(broken.errors), named, right,
            detectors_of(fixed.errors) or "none", detectors_of(fixed.warnings) or "",
            f"{broken.seconds:.0f} / {fixed.seconds:.0f}"], time.monotonic() - t0


HEADER = """# The probe on the casebook's own cases

Generated by `python examples/probe_cases.py` (CPU only: the interpreter detectors;
shape fuzzing at {trials} sizes). For every case that runs on the interpreter,
`harness.probe` ran on `broken.py` and on `fixed.py` with the case's `case.py` as
`--inputs`. *Caught*: the probe reported an error on the broken kernel (wrong now on
some backend and size). *Diagnosis, first*: the first entry of its ranked diagnosis;
*right* when it names the case or its defect class. *False alarms*: errors on the fixed
kernel. *Warnings on fixed*: behaviour Triton leaves undefined that the fixed kernel relies
on (they do not fail a probe without --strict). Cases whose interpreter run is `skip` are
left out.

"""

GPU_HEADER = """# The probe on the casebook's own cases, on a GPU

Generated by `python examples/probe_cases.py --backend gpu` ({device}; shape fuzzing at
{trials} sizes; {jobs} cases at once). For every case whose GPU run is not `skip`,
`harness.probe` ran the GPU detectors on `broken.py` and on `fixed.py` with the case's
`case.py` as `--inputs`, at the case's GPU sizes (compute-sanitizer memcheck and
TRITON_DEBUG=1 at its small sizes). *Caught*: the probe reported an error on the
broken kernel. *Diagnosis, first*: the first entry of its ranked diagnosis; *right* when
it names the case or its defect class. *False alarms*: errors on the fixed kernel.
*Warnings on fixed*: behaviour Triton leaves undefined that the fixed kernel relies on. The cases declared slow (tensors past 2**31 elements) ran
the reference, guards, compute-sanitizer and triton-debug detectors only.

"""


WITH_GPU_HEADER = """# The probe on the casebook's own cases, with a GPU (the GPU and the interpreter at once)

Generated by `python examples/probe_cases.py --backend gpu+interpreter` ({device}; shape fuzzing
at {trials} sizes; {jobs} cases at once). What `python -m harness probe` does by default on a
machine with a GPU: for every case, `harness.probe` ran the GPU detectors and the interpreter's
side by side on `broken.py` and on `fixed.py` (each backend the case runs on), with the case's
`case.py` as `--inputs`; a finding on either counts, and the diagnosis weighs the evidence of
both. The cases declared slow (tensors past 2**31 elements) ran on the GPU alone, with the
reference, guards, compute-sanitizer and triton-debug detectors only. *Caught*: the probe
reported an error on the broken kernel. *Diagnosis, first*: the first entry of its ranked
diagnosis; *right* when it names the case or its defect class. *False alarms*: errors on the
fixed kernel. *Warnings on fixed*: behaviour Triton leaves undefined that the fixed kernel
relies on. *Seconds*: the whole probe's, both backends.

"""


def runs_on(spec, backend: str) -> bool:
    if backend == WITH_GPU:
        return any(runs_on(spec, b) for b in ("gpu", "interpreter"))
    return spec.expect[backend][0] != "skip"


def previous_rows(out: Path) -> dict:
    """The rows of the last table, by slug (``--update`` keeps the others)."""
    if not out.is_file():
        return {}
    rows = {}
    for line in out.read_text().splitlines():
        if line.startswith("| ["):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) == 9:  # a table of the columns written now (an older one is run again)
                rows[cells[0][1:cells[0].index("]")]] = cells
    return rows


def write(rows: list, specs: list, seconds: float, n_run: int, args, device: str | None = None) -> str:
    from tabulate import tabulate

    table = tabulate(rows, headers=["case", "defect", "caught? (an error)", "by (broken kernel)",
                                    "diagnosis, first", "right?", "errors on fixed (false alarms)",
                                    "warnings on fixed", "seconds broken / fixed"], tablefmt="github")
    skipped = [s.slug for s in specs if not runs_on(s, args.backend)]
    caught = sum(r[2] == "yes" for r in rows)
    bugs = sum(not r[2].startswith(("calibration", "not run", "no (hidden")) for r in rows)
    hidden = [r[0][1:r[0].index("]")] for r in rows if r[2].startswith("no (hidden")]
    not_run = [r[0][1:r[0].index("]")] for r in rows if r[2].startswith("not run")]
    right = sum(r[5] == "yes" for r in rows)
    secs = sorted(float(x) for r in rows if "/" in r[8] for x in r[8].split(" / "))
    slowest = f"; seconds per probe: median {secs[len(secs) // 2]:.0f}, max {secs[-1]:.0f}" if secs else ""
    summary = (f"\nCaught {caught} of the {bugs} broken kernels whose bug can show on this backend"
               f"{' (hidden here: ' + ', '.join(hidden) + ')' if hidden else ''}; diagnosed as the case or its defect class first for "
               f"{right} of the {caught} caught; errors (false alarms) on "
               f"{sum(r[6] not in ('none', '') for r in rows)} fixed kernels, warnings on "
               f"{sum(bool(r[7]) for r in rows)}{slowest}. Not run ({args.backend}: skip): "
               f"{', '.join(skipped) or 'none'}{'; not run here: ' + ', '.join(not_run) if not_run else ''}. "
               + (f"Merged from {n_run} per-case tables (--merge: each case ran alone, as its own command).\n"
                  if args.merge else f"The last run ({n_run} cases, broken and fixed) took {seconds:.0f}s.\n"))
    if args.backend == WITH_GPU:
        text = WITH_GPU_HEADER.format(device=device or _device(), trials=args.fuzz_trials, jobs=args.jobs) + table + "\n" + summary
    elif args.backend == "gpu":
        text = GPU_HEADER.format(device=device or _device(), trials=args.fuzz_trials, jobs=args.jobs) + table + "\n" + summary
    else:
        notes = "" if not NOTES.is_file() else "\n" + NOTES.read_text()
        text = HEADER.format(trials=args.fuzz_trials) + table + "\n" + summary + notes
    from harness.core import fileio

    fileio.write_text(Path(args.out), text)
    return summary


def _device() -> str:
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"


def run_rows(chosen: list, args, on_row=None) -> dict:
    """Every chosen case's row, ``args.jobs`` at once; the slow ones one at a time in a lane of their own."""
    done, lock = {}, threading.Lock()

    def one(spec):
        try:
            r, dt = row(spec, args.backend, args.fuzz_trials, args.only)
        except Exception as e:  # noqa: BLE001  one case's failure is its row, never the end of the run
            r, dt = [f"[{spec.slug}](../cases/{spec.slug}/README.md)", spec.defect,
                     f"harness error: {type(e).__name__}: {e}"[:200].replace("|", "/"), "", "", "", "", "", ""], 0.0
        with lock:
            done[spec.slug] = r
            print(f"{spec.slug}: caught {r[2]} by {r[3] or '-'}; diagnosis {r[4] or '-'} (right: {r[5] or '-'}); "
                  f"false alarms {r[6]}; warnings {r[7] or '-'} ({dt:.0f}s)", flush=True)
            if on_row is not None:  # the table so far: a run cut short keeps what it finished
                on_row(done)

    slow = [s for s in chosen if heavy(s, args.backend)]
    chosen = sorted(chosen, key=lambda s: max(s.timeout[b] for b in backends_of(s, args.backend)) >= 60)  # a hang waits longest: first
    lane = threading.Thread(target=lambda: [one(s) for s in slow])
    lane.start()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs - (1 if slow else 0))) as pool:
        list(pool.map(one, [s for s in chosen if s not in slow]))
    lane.join()
    return done


RECORD = False  # --record: also write cases/<slug>/recorded/probe-<backend>.json
TOOLS: list = []  # --tools: opt-in tools run beside the default detectors
JSON_DIR = None  # --json-dir: each probe's report as JSON there


def parse(argv: list[str]):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("slugs", nargs="*", help="only these cases (printed; the table is written with --update or --out)")
    p.add_argument("--update", action="store_true", help="re-run the cases named, keep the table's other rows")
    p.add_argument("--record", action="store_true", help="also write cases/<slug>/recorded/probe-<backend>.json")
    p.add_argument("--backend", choices=["interpreter", "gpu", WITH_GPU], default="interpreter",
                   help=f"{WITH_GPU}: both at once, as the probe runs by default on a machine with a GPU")
    p.add_argument("--json-dir", default=None, help="also write each probe's whole report (JSON) in this folder")
    p.add_argument("--jobs", type=int, default=None,
                   help="cases at once (default: 1 on the interpreter, half the CPU cores on the GPU)")
    p.add_argument("--out", default=None, help="write the table here (default: docs/probe-cases.md on the interpreter)")
    p.add_argument("--fuzz-trials", type=int, default=None,
                   help=f"shape-fuzzing sizes (default {FUZZ_TRIALS}; on the GPU {GPU_FUZZ_TRIALS})")
    p.add_argument("--merge", default=None, metavar="DIR",
                   help="no run: one table (--out) from the per-case tables in DIR, each written by --out on its own")
    p.add_argument("--only", default=None, help="only these detectors, comma-separated (see harness probe --only)")
    p.add_argument("--tools", default=None, metavar="NAMES",
                   help="the default detectors and these opt-in tools, comma-separated (on a GPU "
                        "compute-sanitizer,triton-debug: the report's GPU tools column; a slow case keeps its own "
                        "list, which has both)")
    args = p.parse_args(argv)
    args.jobs = max(1, args.jobs or ((os.cpu_count() or 2) // 2 if args.backend.startswith("gpu") else 1))
    args.fuzz_trials = args.fuzz_trials or (GPU_FUZZ_TRIALS if args.backend.startswith("gpu") else FUZZ_TRIALS)
    args.only = [d.strip() for d in args.only.split(",") if d.strip()] if args.only else None
    args.tools = [d.strip() for d in args.tools.split(",") if d.strip()] if args.tools else []
    if args.out is None and args.backend == "interpreter" and (not args.slugs or args.update):
        args.out = str(OUT)
    return args


def main(argv: list[str]) -> int:
    global RECORD, JSON_DIR, TOOLS
    args = parse(argv)
    RECORD, JSON_DIR, TOOLS = args.record, args.json_dir, args.tools
    if args.merge:
        return merge(args)
    if JSON_DIR:
        os.makedirs(JSON_DIR, exist_ok=True)
    if args.backend.startswith("gpu"):
        from harness.run.backends import cuda_available

        if not cuda_available():
            print(f"--backend {args.backend}: no CUDA GPU on this machine", file=sys.stderr)
            return 2
    specs, _ = discovery.load_all()
    chosen = [s for s in specs if (not args.slugs or s.slug in args.slugs) and runs_on(s, args.backend)]
    total = time.monotonic()
    old = previous_rows(Path(args.out)) if args.out and args.update else {}

    def table(done: dict) -> str:
        rows = [done.get(s.slug) or old[s.slug] for s in specs
                if runs_on(s, args.backend) and (s.slug in done or s.slug in old)]
        return write(rows, specs, time.monotonic() - total, len(done), args)

    done = run_rows(chosen, args, on_row=table if args.out else None)
    if args.out is None:
        return 0
    print(table(done))
    print(f"wrote {args.out}")
    return 0


def merge(args) -> int:
    """--merge DIR: the rows of every per-case table in DIR, in the cases' order, as one table; the
    device is the one those tables name (this machine may have none)."""
    import re

    tables = sorted(Path(args.merge).glob("*.md"))
    if not tables or not args.out:
        print(f"--merge {args.merge}: no per-case tables (*.md) there, or no --out", file=sys.stderr)
        return 2
    rows, device = {}, None
    for t in tables:
        rows.update(previous_rows(t))
        device = device or (m.group(1) if (m := re.search(r"\(([^;()]+); shape fuzzing", t.read_text())) else None)
    specs, _ = discovery.load_all()
    ordered = [rows[s.slug] for s in specs if s.slug in rows and runs_on(s, args.backend)]
    print(write(ordered, specs, 0.0, len(tables), args, device=device))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
