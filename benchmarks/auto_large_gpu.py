"""The run past 2**31 elements that the probe decides on itself (harness/probe/detectors/large.py), at the
defaults: the dev entries with an int32 offset, buggy and fixed, and the test fixture's int32 row kernel and
its int64 twin. Prints one markdown table with the device, torch and triton named.

On the GPU machine, from the repository root (no internet; the bug cache carried as .bugcache; about 3 min):

    CASEBOOK_BUG_CACHE=$PWD/.bugcache python benchmarks/auto_large_gpu.py > docs/measurements/auto-large/h200.md

``--backend interpreter --detectors large`` scans (on the CPU) which versions get the P406 warning, quickly:

    CASEBOOK_BUG_CACHE=/path/.bugcache python benchmarks/auto_large_gpu.py --backend interpreter \\
        --detectors large --entries all-dev

``--cases`` lists, for every case's fixed and broken kernel that runs under the interpreter, the evidence the
probe reads (``int32_offsets.here``: the int32 offsets of the kernels one call at the defaults launched), in
this one process (TRITON_INTERPRET=1 is set for it):

    python benchmarks/auto_large_gpu.py --cases
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ENTRIES = ("sglang-ep-moe-pre-reorder-int32-offset", "torchao-jagged-fp8-rowwise-scales-int32-offset",
           "xformers-rmsnorm-int32-row-offset")
FIXTURE = ROOT / "tests" / "probe_fixtures" / "int32" / "row_scale.py"


def items(names: list[str]) -> list[tuple[str, str, str, str]]:
    """(label, variant, file, launcher) for each entry's buggy and fixed versions, then the fixture's two."""
    from harness.bugs import manifest

    out = []
    for name in names:
        entry = manifest.read(ROOT / "bugs" / name)
        out += [(name, v, str(entry.glue), entry.launcher(v)) for v in ("buggy", "fixed")]
    return out


def device() -> str:
    import torch
    import triton

    where = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU (CPU)"
    return f"{where}; torch {torch.__version__}, triton {triton.__version__}"


def one(label, variant, file, launcher, backends, detectors) -> str:
    from harness.probe import probe
    from harness.probe.runner import ProbeInputError

    t0 = time.monotonic()
    try:
        r = probe(file, launcher=launcher, backends=backends, detectors=detectors)
    except ProbeInputError as e:
        return f"| {label} | {variant} | {time.monotonic() - t0:.1f} | could not run: {str(e)[:120]} | | | | |"
    large = "; ".join(f"{b}: {s}"[:90] for b, d, _, s in r.ran if d == "large") or "-"
    codes = lambda c: ", ".join(f"{f.backend} {f.severity}" for f in r.by_code(c)) or "-"  # noqa: E731
    notes = " / ".join(f.message[:160] for f in r.findings if f.detector == "large" and f.code in ("P000", "P404",
                                                                                                    "P406"))
    first = r.diagnosis[0]["defect"] if r.diagnosis else "-"
    return (f"| {label} | {variant} | {r.seconds:.1f} | {len(r.errors)} / {len(r.warnings)} | {codes('P404')} | "
            f"{codes('P406')} | {large} | {first} | {notes.replace('|', '/') or '-'} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="all", help="all (the GPU if there is one, and the interpreter), gpu, "
                                                     "interpreter")
    ap.add_argument("--detectors", default=None, help="comma-separated (default: every detector, as a user runs it)")
    ap.add_argument("--entries", default=",".join(ENTRIES), help="comma-separated bugs/ names, or all-dev")
    ap.add_argument("--no-fixture", action="store_true")
    ap.add_argument("--cases", action="store_true", help="the evidence in every case's kernels (interpreter)")
    args = ap.parse_args(argv)
    if args.cases:
        return cases()
    from harness.run.backends import resolve_backends

    backends = list(resolve_backends(args.backend))
    names = args.entries.split(",") if args.entries != "all-dev" else _dev()
    todo = items([n for n in names if n])
    if not args.no_fixture:
        todo += [("fixture row_scale.py", "int32 row * n_cols", str(FIXTURE), "launch"),
                 ("fixture row_scale.py", "int64 twin", str(FIXTURE), "launch_fixed")]
    detectors = args.detectors.split(",") if args.detectors else None
    print(f"device: {device()}; backends {'+'.join(backends)}; detectors {args.detectors or 'all (defaults)'}; "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; commit {_commit()}\n")
    print("| item | version | seconds | errors / warnings | P404 | P406 | large detector | diagnosis first | "
          "large's notes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for item in todo:
        print(one(*item, backends, detectors), flush=True)
    return 0


def cases() -> int:
    """The evidence in each case's fixed and broken kernel, one process, the interpreter."""
    import signal

    from harness.core import discovery
    from harness.probe import int32_offsets
    from harness.probe.context import Context
    from harness.probe.target import load
    from harness.run.triton_compat import LAUNCHED, patched

    print(f"device: {device()}; interpreter; the int32 offsets the probe reads in each case's launched kernels "
          f"(int32_offsets.here); {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; commit {_commit()}\n")
    print("| case | kernel | defect | offsets | where (the first four) |\n|---|---|---|---|---|")

    def stuck(*_):
        raise TimeoutError("no answer in 120 s (a kernel that spins)")

    signal.signal(signal.SIGALRM, stuck)
    with patched(interpreter=True):
        for spec in discovery.load_all()[0]:
            for variant in ("fixed", "broken"):
                LAUNCHED.clear()
                try:
                    t = load(str(spec.path / f"{variant}.py"), str(spec.path / "case.py"), spec.launcher,
                             "interpreter", None)
                    signal.alarm(120)
                    found = int32_offsets.here(Context(t, "interpreter", 0, "large"))
                except Exception as e:  # noqa: BLE001  a case the interpreter skips, or one that spins
                    print(f"| {spec.slug} | {variant} | {spec.defect} | not run | {str(e)[:90]} |", flush=True)
                    continue
                finally:
                    signal.alarm(0)
                where = ", ".join(f"{Path(e['file']).name}:{e['line']} `{e['expr']}`" for e in found[:4])
                print(f"| {spec.slug} | {variant} | {spec.defect} | {len(found)} | {where or '-'} |", flush=True)
    return 0


def _dev() -> list[str]:
    import tomllib

    return tomllib.loads((ROOT / "bugs" / "split.toml").read_text())["dev"]


def _commit() -> str:
    head = ROOT / ".git"
    try:
        import subprocess

        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=10).stdout.strip() or "?"
    except (OSError, ValueError):
        return "?" if not head.exists() else "?"


if __name__ == "__main__":
    if "--cases" in sys.argv and os.environ.get("TRITON_INTERPRET") != "1":  # the interpreter from the start
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "TRITON_INTERPRET": "1"})
    sys.exit(main())
