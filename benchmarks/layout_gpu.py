"""The layout detector (P206) on a GPU: every case's fixed and broken kernel probed with ``--backend gpu``
and only the layout detector, its findings printed per case. Run from the repository root on a machine with
a CUDA GPU (no internet needed):

    python benchmarks/layout_gpu.py                      # every case, the log on stdout
    python benchmarks/layout_gpu.py --jobs 4 --out docs/measurements/layout-gpu-h200.log   # and written there
    python benchmarks/layout_gpu.py noncontiguous-input nrm2-race ...   # some cases

It decides whether the detector's GPU side stays on (``harness/probe/detectors/layout.py``: ``GPU_SIDE``):
0 errors on the fixed kernels is what that needs. Exit 0 when every fixed kernel was probed without a P206
error, 1 when one has one (a false alarm on the GPU: the log names it), 2 when nothing can run (no GPU, an
unknown case). A case the machine cannot run (more GPUs than it has, a GPU run declared ``skip``, a slow
case of tensors past 2**31 elements) is a line saying so.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TIMEOUT_S = 120  # one probe of one detector: the layout runs are a handful of launches at the default sizes


def header(backend: str) -> list[str]:
    import torch
    import triton

    from harness.probe.detectors import layout

    where = f"the GPU: {torch.cuda.get_device_name(0)}" if backend == "gpu" else "the interpreter (CPU)"
    return [f"# layout detector (P206) on {where}, torch {torch.__version__}, "
            f"triton {triton.__version__}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
            f"# GPU_SIDE = {layout.GPU_SIDE}; command: python benchmarks/layout_gpu.py "
            f"{' '.join(sys.argv[1:])}".rstrip()]


def why_not(spec, backend: str) -> str:
    """Why the case is not probed on ``backend``, or "" (one that needs more GPUs than the machine has is
    the probe's own "not run" line)."""
    if spec.expect[backend][0] == "skip":
        return f"its {backend} run is declared skip"
    if backend == "gpu" and spec.timeout["gpu"] >= 600:
        return "a slow case (tensors past 2**31 elements): not a default-size layout run"
    return ""


def lines_of(slug: str, variant: str, report) -> tuple[list[str], int]:
    """The log lines of one probe, and its P206 errors."""
    ran = [f"{d}: {st}" for b, d, s, st in report.ran if d == "layout"]
    out = [f"{slug} {variant}: {'; '.join(ran) or 'layout did not run'} ({report.seconds:.1f}s)"]
    if why := next((m.get("unavailable") for m in report.meta.values() if isinstance(m, dict)), None):
        out.append(f"    not run: {why}")
    errors = 0
    for f in report.findings:
        if f.code == "P206" or f.detector == "layout":
            errors += f.code == "P206" and f.severity == "error"
            out.append(f"    {f.code} {f.severity}: {' '.join(f.message.split())}")
    return out, errors


def probe_case(spec, backend: str) -> tuple[list[str], int, bool]:
    """One case's log lines, its probes, and whether its fixed kernel got a P206 error."""
    from harness import probe

    if why := why_not(spec, backend):
        return [f"{spec.slug}: not probed: {why}"], 0, False
    lines, probed, fixed_error = [], 0, False
    for variant in ("fixed", "broken"):
        if not (spec.path / f"{variant}.py").is_file():
            continue
        try:
            r = probe(str(spec.path / f"{variant}.py"), inputs=str(spec.path / "case.py"), launcher=spec.launcher,
                      backends=[backend], detectors=["layout"], jobs=1, timeout=TIMEOUT_S)
        except Exception as e:  # noqa: BLE001  one case's trouble never stops the others
            lines.append(f"{spec.slug} {variant}: the probe raised {type(e).__name__}: {e}"[:300])
            continue
        more, errors = lines_of(spec.slug, variant, r)
        lines += more
        probed += 1
        fixed_error |= variant == "fixed" and errors > 0
    return lines, probed, fixed_error


def chosen(args, script: str, what: str):
    """(every case by slug, the slugs ``args.cases`` names: every case with a fixed kernel where none), or the one
    line saying why nothing can run (``--jobs`` below 1, no GPU for ``--backend gpu``, an unknown case). Shared
    with benchmarks/special_gpu.py."""
    from harness.core import discovery
    from harness.run.backends import gpu_count

    if args.jobs < 1:
        return f"{script}: --jobs must be at least 1"
    if args.backend == "gpu" and gpu_count() < 1:
        return f"{script}: no CUDA GPU on this machine: this script measures {what} on one"
    known = {s.slug: s for s in discovery.load_all()[0]}
    if unknown := [c for c in args.cases if c not in known]:
        return f"{script}: unknown case(s): {', '.join(unknown)}"
    return known, [c for c in (args.cases or sorted(known)) if (known[c].path / "fixed.py").is_file()]


def parser(description: str) -> argparse.ArgumentParser:
    """The command line of a detector's run over the cases (shared with benchmarks/special_gpu.py)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("cases", nargs="*", help="case slugs (default: every case with a fixed kernel)")
    p.add_argument("--out", help="also write the log to this file")
    p.add_argument("--backend", choices=("gpu", "interpreter"), default="gpu",
                   help="gpu (what it is for); interpreter: the same runs on the CPU, to compare")
    p.add_argument("--jobs", type=int, default=1, help="cases probed at once (default 1)")
    return p


def main(argv=None) -> int:
    args = parser(__doc__.splitlines()[0]).parse_args(argv)
    got = chosen(args, "layout_gpu", "the layout detector")
    if isinstance(got, str):
        print(got, file=sys.stderr)
        return 2
    known, slugs = got
    log = header(args.backend)
    print("\n".join(log), flush=True)
    done: dict = {}
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:  # each probe runs in worker processes of its own
        futures = {pool.submit(probe_case, known[c], args.backend): c for c in slugs}
        for fut in as_completed(futures):
            done[futures[fut]] = fut.result()
            print("\n".join(done[futures[fut]][0]), flush=True)
    fixed_errors = [c for c in slugs if done[c][2]]
    probed = sum(done[c][1] for c in slugs)
    for c in slugs:  # the log in case order, whatever order they ended in
        log += done[c][0]
    tail = (f"# {probed} probes; fixed kernels with a P206 error: {len(fixed_errors)}"
            f"{' (' + ', '.join(fixed_errors) + ')' if fixed_errors else ''}")
    log.append(tail)
    print(tail, flush=True)
    if args.out:
        from harness.core import fileio

        fileio.write_text(Path(args.out), "\n".join(log) + "\n")
    if not probed:
        print("layout_gpu: nothing was probed", file=sys.stderr)
        return 2
    return 1 if fixed_errors else 0


if __name__ == "__main__":
    sys.exit(main())
