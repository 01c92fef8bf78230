"""The error floor (``harness.probe.floor``) measured on the casebook's cases, on this CPU (the interpreter).

    python examples/floor_cases.py                   # every case that runs on the interpreter
    python examples/floor_cases.py bf16-accumulation layernorm-padding-variance

For each case, its fixed and its broken kernel run at the case's interpreter sizes and at the
degenerate sizes (every size 1, then 2; where make_inputs takes them) against the float64
reference. A row gives the largest error in units of the fixed per-dtype tolerance (``fixed``:
above 1 the old rule said wrong) and in units of the floor's allowance (``floor``: the error over
``K`` times the floor, elementwise or normwise; above 1 the new rule says wrong), with the floor
itself (its largest element) beside it. Masked lanes read 0 and tl.dot is exact here (the
interpreter's plain run): what the floor rules on is the kernels' arithmetic.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _ratios(target, inputs, out, ref):
    import torch

    from harness.probe import floor

    o = out.detach().to("cpu", torch.float64).reshape(-1)
    r = ref.reshape(-1)
    if o.numel() != r.numel():
        return None
    rtol, atol = target.tolerance_for(out.dtype, ref)
    err = (o - r).abs()
    ok = torch.isfinite(err)
    fixed = atol + rtol * r.abs()
    allow = floor.allowance(ref)
    fl = float(allow.max()) / floor.K if allow is not None and allow.numel() else float("nan")
    by_fixed = float((err[ok] / fixed[ok]).max()) if ok.any() else float("nan")
    by_floor = float((err[ok] / (fixed[ok] + allow[ok])).max()) if allow is not None and ok.any() else float("nan")
    return by_fixed, by_floor, fl, int((~ok).sum())


def measure(slug: str) -> list:
    from harness.core.spec import load_spec
    from harness.probe import execute as X
    from harness.probe import target as T
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
                out = call_with(t.launcher, given)
            except Exception as e:  # noqa: BLE001  a size the launcher or make_inputs refuses
                rows.append((slug, variant, label, f"raised {type(e).__name__}"))
                continue
            if out is None or isinstance(out, (tuple, list, dict)):
                rows.append((slug, variant, label, "several or in-place outputs: see the probe"))
                continue
            got = _ratios(t, inputs, out, ref)
            rows.append((slug, variant, label, "shape differs" if got is None else
                         f"fixed {got[0]:.3g}  floor {got[1]:.3g}  (floor max {got[2]:.3g}, non-finite {got[3]})"))
    return rows


def main(argv: list) -> int:
    from harness.core import discovery
    from harness.core.spec import load_spec

    if len(argv) == 1:
        for row in measure(argv[0]):
            print(" | ".join(map(str, row)), flush=True)
        return 0
    import subprocess

    slugs = argv or [f.name for f in discovery.case_folders()
                     if load_spec(f).expect.get("interpreter") != "skip"]
    for slug in slugs:  # each in a process of its own: a broken kernel that writes past its tensors ends only it
        got = subprocess.run([sys.executable, __file__, slug], capture_output=True, text=True, timeout=600)
        print(got.stdout.rstrip() or f"{slug} | - | - | ended with {got.returncode}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
