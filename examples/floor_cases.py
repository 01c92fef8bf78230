"""The error floor (``harness.probe.floor``) measured on the casebook's cases, on this CPU (the interpreter).

    python examples/floor_cases.py                   # every case that runs on the interpreter
    python examples/floor_cases.py bf16-accumulation layernorm-padding-variance
    python examples/floor_cases.py --fixture           # the tests' ill-conditioned RMSNorm backward

For each case, its fixed and its broken kernel run at the case's interpreter sizes and at the
degenerate sizes (every size 1, then 2; where make_inputs takes them) against the float64
reference. A row gives the largest error in units of the fixed per-dtype tolerance (``fixed``:
above 1 the old rule said wrong), the largest error in floors (each element's own, or the
output's RMS floor where that is larger), and, where some element is beyond the fixed
tolerance, by how many floors the worst of them is beyond it: above ``K`` = 16 the new rule says
wrong. Masked lanes read 0 and tl.dot is exact here (the
interpreter's plain run): what the floor rules on is the kernels' arithmetic.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _ratios(target, out, ref) -> str:
    """The largest error in fixed tolerances, and, over the elements beyond the fixed tolerance, the
    largest excess in floors (``harness.probe.floor``: the new rule says wrong above ``K``)."""
    import torch

    from harness.probe import floor

    if not out.dtype.is_floating_point:
        return "integer result: exact, no floor"
    o = out.detach().to("cpu", torch.float64).reshape(-1)
    r = ref.reshape(-1)
    if o.numel() != r.numel():
        return "shape differs"
    rtol, atol = target.tolerance_for(out.dtype, ref)
    err = (o - r).abs()
    bad = ~torch.isfinite(err) & ~(torch.isnan(o) & torch.isnan(r))
    err = torch.where(torch.isfinite(err), err, torch.zeros_like(err))
    fixed = atol + rtol * r.abs()
    beyond = err > fixed
    text = f"fixed {float((err / fixed).max()):.3g}" + (f", {int(bad.sum())} non-finite" if bad.any() else "")
    allow = floor.allowance(ref)
    if allow is None:
        return text + ", no floor"
    unit = allow / floor.K
    text += f", error up to {float((err / unit).max()):.3g} floors (floor up to {float(unit.max()):.3g})"
    if not beyond.any():
        return text
    return text + f", beyond the fixed tolerance by {float(((err - fixed)[beyond] / unit[beyond]).max()):.3g} floors"


def measure(slug: str) -> list:
    from harness.core.spec import load_spec
    from harness.probe import execute as X
    from harness.probe import target as T
    from harness.run.triton_compat import patched
    from harness.run.worker import call_with

    spec = load_spec(ROOT / "cases" / slug)
    rows = []
    for variant in ("fixed", "broken"):
        try:
            t = T.load(str(spec.path / f"{variant}.py"), str(spec.path / "case.py"), spec.launcher)
        except Exception as e:  # noqa: BLE001
            rows.append((slug, variant, "-", f"not loaded: {e}"))
            continue
        ints = {k: v for k, v in t.sizes.items() if isinstance(v, int) and not isinstance(v, bool)}
        for label, sizes in (("default", t.sizes), ("all 1", {**t.sizes, **{k: 1 for k in ints}}),
                             ("all 2", {**t.sizes, **{k: 2 for k in ints}})):
            try:
                inputs = X.make(t, sizes, 0, "interpreter")
                ref = X.reference(t, inputs)
                given = X.clone_inputs(inputs)
                with patched(interpreter=True):  # the CPU autotune benchmarker, as the probe's worker
                    out = call_with(t.launcher, given)
            except Exception as e:  # noqa: BLE001  a size the launcher or make_inputs refuses
                rows.append((slug, variant, label, f"raised {type(e).__name__}"))
                continue
            if out is None or isinstance(out, (tuple, list, dict)):
                rows.append((slug, variant, label, "several or in-place outputs: see the probe"))
                continue
            rows.append((slug, variant, label, _ratios(t, out, ref)))
    return rows


FIXTURE = ROOT / "tests" / "probe_fixtures" / "severity" / "rmsnorm_bwd.py"


def measure_fixture() -> list:
    """The ill-conditioned RMSNorm backward of the tests (correct, and with its reduction in bf16),
    at one column and at 64, six seeds each."""
    from harness.probe import execute as X
    from harness.probe import target as T
    from harness.run.worker import call_with

    rows = []
    for launcher in ("launch", "launch_bf16"):
        t = T.load(str(FIXTURE), None, launcher)
        for sizes in ({"rows": 2, "cols": 1}, {"rows": 8, "cols": 64}):
            for seed in range(6):
                inputs = X.make(t, sizes, seed, "interpreter")
                ref = X.reference(t, inputs)
                out = call_with(t.launcher, X.clone_inputs(inputs))
                rows.append((f"rmsnorm_bwd.py {launcher}", f"seed {seed}", ", ".join(f"{k}={v}" for k, v in sizes.items()),
                             _ratios(t, out, ref)))
    return rows


def measure_units() -> list:
    """Why the accumulator's unit and not the inputs' own: bf16-accumulation's broken kernel at its
    defaults, its wrong elements counted with the floor from float32's unit (2**-24) and from
    bfloat16's (2**-8, one unit in the last place of its inputs)."""
    import torch

    from harness.probe import execute as X
    from harness.probe import floor
    from harness.probe import target as T
    from harness.run.worker import call_with

    case = ROOT / "cases" / "bf16-accumulation"
    t = T.load(str(case / "broken.py"), str(case / "case.py"), "bias_grad")
    inputs = X.make(t, t.sizes, 0, "interpreter")
    out = call_with(t.launcher, X.clone_inputs(inputs)).double().reshape(-1)
    rows, own = [], floor.accumulator_unit
    try:
        for unit in (2.0 ** -24, 2.0 ** -8):
            floor.accumulator_unit = lambda _inputs, unit=unit: unit
            ref = X.reference(t, inputs)
            rtol, atol = t.tolerance_for(torch.bfloat16, ref)
            allow = floor.allowance(ref)
            err = (out - ref).abs()
            rows.append(("bf16-accumulation broken", f"unit 2**{round(torch.log2(torch.tensor(unit)).item())}",
                         ", ".join(f"{k}={v}" for k, v in t.sizes.items()),
                         f"{int((err > atol + rtol * ref.abs() + allow).sum())} of {err.numel()} wrong "
                         f"(K x floor up to {float(allow.max()):.3g}, error up to {float(err.max()):.3g})"))
    finally:
        floor.accumulator_unit = own
    return rows


def main(argv: list) -> int:
    from harness.core import discovery
    from harness.core.spec import load_spec

    if len(argv) == 1:
        for row in (measure_fixture() + measure_units() if argv[0] == "--fixture" else measure(argv[0])):
            print(" | ".join(map(str, row)), flush=True)
        return 0
    import subprocess

    slugs = argv or [f.name for f in discovery.case_folders()
                     if load_spec(f).expect.get("interpreter") != "skip"] + ["--fixture"]
    if not argv:
        import datetime
        import platform

        import torch
        import triton

        from harness.probe import floor

        print(f"Ran on CPU ({platform.machine()}), TRITON_INTERPRET=1; torch {torch.__version__}, triton "
              f"{triton.__version__}, Python {platform.python_version()} "
              f"({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC). Made by `python "
              f"examples/floor_cases.py`; K = {floor.K}, {floor.SAMPLES} Monte Carlo runs.\n", flush=True)
    for slug in slugs:  # each in a process of its own: a broken kernel that writes past its tensors ends only it
        try:
            got = subprocess.run([sys.executable, __file__, slug], capture_output=True, text=True, timeout=120,
                                 cwd=ROOT)
        except subprocess.TimeoutExpired as e:  # a kernel that spins (spin-lock-no-ordering): what it got to
            print(((e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")).rstrip()
                  or "", f"{slug} | - | - | still running after 120 s", sep="\n", flush=True)
            continue
        print(got.stdout.rstrip() or f"{slug} | - | - | ended with {got.returncode}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
