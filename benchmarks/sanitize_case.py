"""A plain script that launches one case's kernel on its case.py inputs, as a user's own script
would: ``python benchmarks/sanitize_case.py SLUG VARIANT`` (under ``python -m harness sanitize``:
every launch checked). The inputs are made with ``device="cuda"`` at the case's interpreter
sizes (a GPU program; ``sanitize`` fakes CUDA where there is none); each of the case's calls is
compared with the reference and printed. Exit 0 whatever the result: the findings are the point.

``--time`` (for benchmarks/sanitize_cases.py) times the launcher's calls instead (the reference
and the inputs outside the clock): the interpreter with
the same CPU fixes and fake CUDA but no instrumentation, against the same calls inside the
sanitizer's session, by turns, each after a warm-up call, the fastest of four each way; one JSON line
on stdout.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 4  # the fastest of four, each way, by turns (the CPU is shared)
sys.path.insert(0, str(ROOT))


def load(slug: str, variant: str):
    from harness.core import discovery
    from harness.core.spec import load_spec

    spec = load_spec(ROOT / "cases" / slug)
    return spec, discovery.load_module(spec, "case"), getattr(discovery.load_module(spec, variant), spec.launcher)


def inputs(spec, case, device="cuda"):
    import torch

    return case.make_inputs(device=device, gen=torch.Generator().manual_seed(0), **spec.sizes["interpreter"])


def calls(spec, case, launcher, args, say=print) -> float:
    """The case's calls, each beside its reference; the seconds spent in the launcher."""
    import torch

    from harness.run.worker import call_with

    spent = 0.0
    for call in range(spec.calls):
        ref = call_with(case.reference, {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in args.items()})
        t0 = time.perf_counter()
        out = launcher(**args)
        spent += time.perf_counter() - t0
        out = out if isinstance(out, torch.Tensor) else torch.as_tensor(out)
        err = (out.double() - torch.as_tensor(ref).double()).abs().max().item() if out.numel() else 0.0
        say(f"call {call + 1}: max abs error {err:.3g}")
    return spent


def timed(slug: str, variant: str) -> dict:
    """The launcher's calls, plain interpreter and sanitized by turns on fresh inputs, each turn a
    warm-up call and a timed one, the fastest of each (taking turns keeps a machine whose load
    drifts from favouring either)."""
    from harness.run import triton_compat
    from harness.sanitize import fakecuda
    from harness.sanitize.session import Session, bench_once

    os.environ["TRITON_INTERPRET"] = "1"
    spec, case, launcher = load(slug, variant)
    quiet = lambda *a: None  # noqa: E731

    def plain_run() -> float:
        with triton_compat.patched(interpreter=True):
            undo, undo_bench = fakecuda.install(), bench_once()
            try:
                calls(spec, case, launcher, inputs(spec, case), say=quiet)  # warm: the patches' first rewrite
                return calls(spec, case, launcher, inputs(spec, case), say=quiet)
            finally:
                undo_bench()
                undo()

    def sanitized_run() -> tuple:
        with Session() as session:
            calls(spec, case, launcher, inputs(spec, case), say=quiet)
            before = session.launches
            return calls(spec, case, launcher, inputs(spec, case), say=quiet), session.launches - before

    plain, sanitized = [], []
    for _ in range(REPEATS):
        plain.append(plain_run())
        seconds, launches = sanitized_run()
        sanitized.append(seconds)
    return {"case": slug, "variant": variant, "plain_s": min(plain), "sanitized_s": min(sanitized),
            "launches": launches}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("slug")
    p.add_argument("variant", choices=("broken", "fixed"))
    p.add_argument("--time", action="store_true")
    a = p.parse_args()
    if a.time:
        print(json.dumps(timed(a.slug, a.variant)))
        return 0
    spec, case, launcher = load(a.slug, a.variant)
    calls(spec, case, launcher, inputs(spec, case))
    return 0


if __name__ == "__main__":
    sys.exit(main())
