"""``python -m harness bench <slug>``: time a case's fixed kernel (its fast.py, where it has one) against PyTorch.

A case opts in with a ``[bench]`` table in case.toml::

    [bench]
    unit = "GB/s"                      # or "TFLOP/s"
    sizes = [{n = 1048576}, {n = 268435456}]

and two functions in case.py: ``torch_equivalent(...)`` (what PyTorch users call) and
``bench_work(...)`` (bytes moved for GB/s, floating-point operations for TFLOP/s).
Inputs come from the case's own ``make_inputs``. Times are medians from
``triton.testing.do_bench``; every size is also checked against the reference.
"""

from __future__ import annotations

import sys

from harness.core import recorded, table
from harness.errors import EXIT_MISMATCH, EXIT_OK, UsageError, error_line
from harness.options import add_selection, load_specs
from harness.run.backends import cuda_available
from harness.run.isolate import exit_message, run_process


BENCH_TIMEOUT = 600  # seconds for one case's whole bench, all sizes


def bench_case(spec) -> tuple[list[list], dict]:
    """Time the fixed kernel at every [bench] size, in its own process: (rows, env)."""
    proc = run_process("harness.run.bench_worker", {"path": str(spec.path)}, backend="gpu", timeout=BENCH_TIMEOUT)
    env = next((e for e in proc.events if e.get("event") == "env"), {})
    error = next((e for e in proc.events if e.get("event") == "error"), None)
    rows = [row_text(spec, e) for e in proc.events if e.get("event") == "row"]
    if proc.hung:
        raise RuntimeError(f"timed out after {BENCH_TIMEOUT}s, {len(rows)} of {len(spec.bench['sizes'])} sizes done")
    if error is not None:
        raise RuntimeError(f"{error['type']}: {error['message']}")
    if proc.returncode or not any(e.get("event") == "done" for e in proc.events):
        raise RuntimeError(f"the bench worker died ({exit_message(proc.returncode or 0)})")
    return rows, env


def row_text(spec, e: dict) -> list[str]:
    scale = 1e-9 if spec.bench["unit"] == "GB/s" else 1e-12
    rate = lambda ms: e["work"] * scale / (ms * 1e-3)  # noqa: E731
    label = ", ".join(f"{k}={v}" for k, v in e["sizes"].items())
    return [label, f"{e['ms_fixed'] * 1e3:.1f}", f"{e['ms_torch'] * 1e3:.1f}", f"{rate(e['ms_fixed']):.1f}",
            f"{rate(e['ms_torch']):.1f}", f"{e['ms_torch'] / e['ms_fixed']:.2f}x",
            "ok" if e["close"] else f"WRONG ({e['result']})"]


def timed_variant(spec) -> str:
    """The kernel bench times: fast.py where the case has one, else fixed.py (as run/bench_worker picks)."""
    return "fast" if "fast" in spec.variants else "fixed"


def run(args) -> int:
    specs, errors = load_specs(args.slugs, args.all)
    specs = [s for s in specs if s.bench]
    if args.slugs and not args.all and not specs:
        raise UsageError(f"{', '.join(args.slugs)}: no [bench] table in case.toml; this case is not an operator")
    if not cuda_available():
        raise UsageError("bench needs a CUDA GPU, and this machine has none")
    ok = True
    for spec in specs:
        try:
            rows, env_event = bench_case(spec)
        except Exception as e:  # one case failing never stops the others
            print(f"error: {spec.slug}: {error_line(e)}", file=sys.stderr)
            ok = False
            continue
        unit, timed = spec.bench["unit"], timed_variant(spec)
        headers = ["size", f"{timed} (us)", "torch (us)", f"{timed} {unit}", f"torch {unit}",
                   f"torch time / {timed} time", "check"]
        from tabulate import tabulate  # here, not at the top: lint and --help need only the standard library
        text = tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)
        env = table.env_lines([{k: v for k, v in env_event.items() if k != "event"}])
        ok &= all(r[-1] == "ok" for r in rows)
        print(f"\n{spec.slug}: {timed}.py against {spec.bench['torch']}")
        print("\n".join(env))
        print(text)
        if args.record:
            body = "\n".join(["```", f"$ python -m harness bench {spec.slug}"] + env + ["```", "", text]) + "\n"
            recorded.write_bench(spec, body)
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    return EXIT_OK if ok and not errors else EXIT_MISMATCH


def register(sub) -> None:
    p = sub.add_parser("bench", help="time fixed kernels against PyTorch on the GPU")
    add_selection(p, "every case with a [bench] table")
    p.add_argument("--record", action="store_true", help="write the table into the case folder and write-up")
    p.set_defaults(func=run)
