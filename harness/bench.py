"""``python -m harness bench <slug>``: time a case's fixed kernel against PyTorch on the GPU.

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

from tabulate import tabulate

from harness import compare, discovery, table
from harness.worker import _call_with, environment


def bench_case(spec, repeat_ms: int = 200) -> tuple[list[list], dict]:
    import torch
    import triton.testing

    cfg = spec.raw.get("bench")
    case = discovery.load_module(spec, "case")
    fixed = discovery.load_module(spec, "fixed")
    launcher = getattr(fixed, spec.launcher)
    unit = cfg.get("unit", "GB/s")
    scale = 1e-9 if unit == "GB/s" else 1e-12
    rows = []
    for sizes in cfg["sizes"]:
        gen = torch.Generator().manual_seed(0)
        inputs = case.make_inputs(device="cuda", gen=gen, **sizes)
        ref = _call_with(case.reference, {k: (v.clone() if isinstance(v, torch.Tensor) else v)
                                          for k, v in inputs.items()})
        out = launcher(**inputs)
        torch.cuda.synchronize()
        check = compare.compare(out, ref, spec.rtol, spec.atol)
        del ref, out
        work = _call_with(case.bench_work, inputs)
        ms_fixed = triton.testing.do_bench(lambda: launcher(**inputs), rep=repeat_ms, return_mode="median")
        ms_torch = triton.testing.do_bench(lambda: _call_with(case.torch_equivalent, inputs), rep=repeat_ms,
                                           return_mode="median")
        rate = lambda ms: work * scale / (ms * 1e-3)  # noqa: E731
        label = ", ".join(f"{k}={v}" for k, v in sizes.items())
        rows.append([label, f"{ms_fixed * 1e3:.1f}", f"{ms_torch * 1e3:.1f}", f"{rate(ms_fixed):.1f}",
                     f"{rate(ms_torch):.1f}", f"{ms_torch / ms_fixed:.2f}x",
                     "ok" if check["close"] else f"WRONG ({check['result']})"])
        del inputs
        torch.cuda.empty_cache()
    return rows, {"unit": unit, "env": environment("gpu")}


def cmd_bench(args) -> int:
    from harness.cli import EXIT_MISMATCH, EXIT_OK, UsageError, cuda_available, load_specs

    specs, errors = load_specs(args.slugs, args.all)
    specs = [s for s in specs if "bench" in s.raw]
    if args.slugs and not args.all and not specs:
        raise UsageError(f"{', '.join(args.slugs)}: no [bench] table in case.toml; this case is not an operator")
    if not cuda_available():
        raise UsageError("bench needs a CUDA GPU, and this machine has none")
    ok = True
    for spec in specs:
        try:
            rows, info = bench_case(spec)
        except Exception as e:  # one case failing never stops the others
            print(f"error: {spec.slug}: {table.error_line(e)}", file=sys.stderr)
            ok = False
            continue
        unit = info["unit"]
        headers = ["size", "fixed (us)", "torch (us)", f"fixed {unit}", f"torch {unit}", "torch time / fixed time",
                   "check"]
        text = tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True)
        env = table.env_lines([info["env"]])
        ok &= all(r[-1] == "ok" for r in rows)
        print(f"\n{spec.slug}: fixed kernel against {spec.raw['bench'].get('torch', 'PyTorch')}")
        print("\n".join(env))
        print(text)
        if args.record:
            from harness.record import splice

            body = "\n".join(["```", f"$ python -m harness bench {spec.slug}"] + env + ["```", "", text]) + "\n"
            (spec.path / "recorded").mkdir(exist_ok=True)
            (spec.path / "recorded" / "bench-gpu.md").write_text(body)
            splice(spec.path / "README.md", "bench", body)
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    return EXIT_OK if ok and not errors else EXIT_MISMATCH


def register(sub) -> None:
    p = sub.add_parser("bench", help="time fixed kernels against PyTorch on the GPU")
    p.add_argument("slugs", nargs="*", metavar="slug")
    p.add_argument("--all", action="store_true", help="every case with a [bench] table")
    p.add_argument("--record", action="store_true", help="write the table into the case folder and write-up")
    p.set_defaults(func=cmd_bench)
