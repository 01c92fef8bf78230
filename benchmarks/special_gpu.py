"""The special-value detector (P207) on a GPU: first the GPU's own float32 arithmetic at the values the detector
meets (zeros, infinities, NaN, subnormals, exp's overflow edge) beside IEEE's and beside the detector's emulation
of it (``harness/probe/detectors/special.py``: ``gpu_arithmetic``), then every case's fixed and broken kernel
probed with ``--backend gpu`` and only the special detector, one table row each. Run from the repository root on
a machine with a CUDA GPU (no internet needed):

    python benchmarks/special_gpu.py --jobs 8 --out docs/measurements/special-gpu-h200.md   # every case
    python benchmarks/special_gpu.py softmax-no-max-subtraction padding-division-by-zero   # some cases
    python benchmarks/special_gpu.py --backend interpreter --jobs 2   # the same probes on the CPU, to compare

It decides whether the detector's GPU side stays on (``GPU_SIDE`` in special.py): that needs 0 P207 errors on the
fixed kernels and an emulation that covers every NaN or Inf the GPU's arithmetic gives where IEEE's is finite.
Exit 0 when both hold, 1 when one does not (the log names it), 2 when nothing can run (no GPU, an unknown case).
Each probe runs without a budget (``--budget``, default 0: none), so that every special value is tried; a case
the machine cannot run is a row saying so (``layout_gpu.why_not``).
"""

from __future__ import annotations

import math
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

TIMEOUT_S = 120  # one probe of one detector: at most a dozen launches at the default sizes and their references
OPS = ("exp", "log", "sqrt", "rsqrt", "div", "exp->fp16")


def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def math_kernel(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m, other=1.0)
        if OP == 1:
            r = tl.log(x)
        elif OP == 2:
            r = tl.sqrt(x)
        elif OP == 3:
            r = tl.rsqrt(x)
        elif OP == 4:
            r = x / tl.load(y_ptr + offs, mask=m, other=1.0)
        else:  # 0, and 5: the float32 exp rounded to the fp16 output by the store
            r = tl.exp(x)
        tl.store(out_ptr + offs, r, mask=m)

    return math_kernel


def _values(op: str):
    """(x, y) float32 probe values of one operation (y: the divisor, for div)."""
    import numpy as np
    import torch

    special = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-40, -1e-40, 1e-45, 1.0, -1.0, 1e-38, 3e38]
    xs = list(special)
    if op in ("exp", "exp->fp16"):
        edge = np.float32(88.72283935546875 if op == "exp" else math.log(65520.0))
        below = [edge]
        for _ in range(1500):  # float32 neighbours of the overflow edge, on both sides
            below.append(np.nextafter(below[-1], np.float32(0)))
        above = [edge]
        for _ in range(1500):
            above.append(np.nextafter(above[-1], np.float32(1e3)))
        xs += [float(v) for v in below + above] + np.linspace(-600, 600, 4001).tolist()
        xs += (-np.linspace(86.0, 106.0, 2001)).tolist()  # results that are subnormal in IEEE float32
    else:
        xs += np.logspace(-45, 38, 2000).tolist()
    x = torch.tensor(xs, dtype=torch.float32)
    if op != "div":
        return x, torch.ones_like(x)
    y = torch.tensor([0.0, 0.0, math.inf, 1e-40, 1e-40, 3e38, -0.0, 1e38], dtype=torch.float32)
    x8 = torch.tensor([0.0, 1.0, math.inf, 1e-40, 1.0, 3e38, 1.0, 1e-38], dtype=torch.float32)
    return torch.cat([x8, x]), torch.cat([y, x.flip(0)])


def _ieee(op: str, x, y):
    """The operation in IEEE float32 (torch on the CPU keeps subnormals) and in float64 (the exact result)."""
    import torch

    f = {"exp": torch.exp, "exp->fp16": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
         "rsqrt": torch.rsqrt, "div": None}[op]
    out32 = x / y if f is None else f(x)
    out64 = x.double() / y.double() if f is None else f(x.double())
    if op == "exp->fp16":
        out32 = out32.to(torch.float16)
    return out32, out64


def _emulated(op: str, x, y):
    """What the detector's GPU-arithmetic run (``special.gpu_arithmetic``) gives for the same operation."""
    import torch

    from harness.probe.detectors import special

    f = {"exp": torch.exp, "exp->fp16": torch.exp, "log": torch.log, "sqrt": torch.sqrt,
         "rsqrt": torch.rsqrt, "div": torch.div}[op]
    args = (special.flushed(x.clone()),) if op != "div" else (special.flushed(x.clone()), special.flushed(y.clone()))
    out = special.gpu_arithmetic(f, args, None)
    return out.to(torch.float16) if op == "exp->fp16" else out


def arithmetic(device: str = "cuda") -> tuple[list[str], bool]:
    """The GPU's float32 arithmetic at the detector's values against IEEE's and the emulation: the log lines, and
    whether the emulation is non-finite wherever the GPU is and IEEE is not (``device``: "cpu" under
    TRITON_INTERPRET=1, numpy's IEEE arithmetic, to try the script itself)."""
    import torch
    import triton

    kernel = _kernel()
    lines = ["## The GPU's float32 arithmetic at the special values", "",
             "| operation | values | GPU non-finite where IEEE float32 is finite | of those, the emulation finite "
             "(uncovered) | GPU at 0, -0, +inf, -inf, NaN (div: 0/0, 1/0, inf/inf, 1e-40/1e-40, 1/1e-40) | largest "
             "relative error against float64 (normal results) |", "|---|---|---|---|---|---|"]
    covered = True
    for i, op in enumerate(OPS):
        x, y = _values(op)
        out = torch.empty(x.shape, dtype=torch.float16 if op == "exp->fp16" else torch.float32, device=device)
        kernel[(triton.cdiv(x.numel(), 1024),)](x.to(device), y.to(device), out, x.numel(), OP=i, BLOCK=1024)
        gpu = out.cpu()
        ieee, exact = _ieee(op, x, y)
        emu = _emulated(op, x, y)
        gap = ~torch.isfinite(gpu) & torch.isfinite(ieee)
        missed = gap & torch.isfinite(emu)
        covered &= not bool(missed.any())
        normal = torch.isfinite(gpu) & torch.isfinite(exact) & (exact.abs() >= torch.finfo(gpu.dtype).tiny) \
            & (exact.abs() <= float(torch.finfo(gpu.dtype).max))
        rel = ((gpu.double() - exact).abs() / exact.abs())[normal]
        at = ", ".join(f"{float(v):g}" for v in gpu[:5])
        first = f" (first x = {float(x[gap][0]):.9g})" if bool(gap.any()) else ""
        miss = f" (first x = {float(x[missed][0]):.9g})" if bool(missed.any()) else ""
        lines.append(f"| {op} | {x.numel()} | {int(gap.sum())}{first} | {int(missed.sum())}{miss} | {at} | "
                     f"{float(rel.max()) if rel.numel() else 0.0:.2e} |")
    lines += ["", f"emulation covers the GPU: {'yes' if covered else 'NO'}", ""]
    return lines, covered


def probe_kernel(spec, variant: str, backend: str, budget: float) -> dict:
    """One kernel probed with the special detector alone: its row (findings, seconds, a P207 error or not)."""
    from layout_gpu import why_not

    from harness import probe

    row = {"case": spec.slug, "variant": variant, "findings": "", "seconds": 0.0, "error": False, "ran": ""}
    if why := why_not(spec, backend):
        return {**row, "findings": f"not probed: {why}"}
    t0 = time.monotonic()
    try:
        r = probe(str(spec.path / f"{variant}.py"), inputs=str(spec.path / "case.py"), launcher=spec.launcher,
                  backends=[backend], detectors=["special"], jobs=1, timeout=TIMEOUT_S, budget=budget)
    except Exception as e:  # noqa: BLE001  one case's trouble never stops the others
        return {**row, "findings": f"the probe raised {type(e).__name__}: {e}"[:300],
                "seconds": time.monotonic() - t0}
    found = [f for f in r.findings if f.code == "P207" or f.detector == "special"]
    ran = next((st for _, d, _, st in r.ran if d == "special"), "not run")
    if why := next((m.get("unavailable") for m in r.meta.values() if isinstance(m, dict)), None):
        ran = f"not run: {why}"
    said = "; ".join(f"{f.code} {f.severity}: {' '.join(f.message.split())[:200]}" for f in found)
    return {**row, "findings": said or "none", "ran": ran[:90], "seconds": r.seconds,
            "error": any(f.code == "P207" and f.severity == "error" for f in found)}


def main(argv=None) -> int:
    from layout_gpu import chosen, parser

    p = parser(__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=0.0, help="each probe's --budget in seconds (default 0: none)")
    args = p.parse_args(argv)
    import torch
    import triton

    from harness.probe.detectors import special

    got = chosen(args, "special_gpu", "the special detector") if args.budget >= 0 else \
        "special_gpu: --budget must be at least 0"
    if isinstance(got, str):
        print(got, file=sys.stderr)
        return 2
    known, slugs = got
    where = f"the GPU: {torch.cuda.get_device_name(0)}" if args.backend == "gpu" else "the interpreter (CPU)"
    log = [f"# special detector (P207) on {where}, torch {torch.__version__}, triton {triton.__version__}, "
           f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
           f"GPU_SIDE = {special.GPU_SIDE}; command: "
           f"`{' '.join(['python benchmarks/special_gpu.py', *(sys.argv[1:] if argv is None else argv)])}`", ""]
    covered = True
    if args.backend == "gpu":
        lines, covered = arithmetic()
        log += lines
        print("\n".join(log), flush=True)
    kernels = [(known[c], v) for c in slugs for v in ("fixed", "broken") if (known[c].path / f"{v}.py").is_file()]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:  # each probe runs in worker processes of its own
        rows = list(pool.map(lambda kv: probe_kernel(kv[0], kv[1], args.backend, args.budget), kernels))
    log += ["## Every case's kernels, the special detector alone", "",
            "| case | variant | findings | seconds |", "|---|---|---|---|"]
    log += [f"| {r['case']} | {r['variant']} | {r['findings'].replace('|', '/')}"
            f"{' (' + r['ran'] + ')' if r['ran'] and not r['ran'].startswith('done') else ''} | {r['seconds']:.1f} |"
            for r in rows]
    fixed_errors = [r["case"] for r in rows if r["variant"] == "fixed" and r["error"]]
    probed = [r for r in rows if r["ran"]]
    caught = [r["case"] for r in rows if r["variant"] == "broken" and r["error"]]
    secs = sorted(r["seconds"] for r in probed) or [0.0]
    log += ["", f"{len(probed)} probes ({len(rows)} kernels); fixed kernels with a P207 error: {len(fixed_errors)}"
                f"{' (' + ', '.join(fixed_errors) + ')' if fixed_errors else ''}; broken kernels with one: "
                f"{len(caught)}; seconds per probe: median {secs[len(secs) // 2]:.1f}, largest {secs[-1]:.1f}"]
    print("\n".join(log[log.index("## Every case's kernels, the special detector alone"):]), flush=True)
    if args.out:
        from harness.core import fileio

        fileio.write_text(Path(args.out), "\n".join(log) + "\n")
    if not probed:
        print("special_gpu: nothing was probed", file=sys.stderr)
        return 2
    return 1 if fixed_errors or not covered else 0


if __name__ == "__main__":
    sys.exit(main())
