"""Where an autotuned case's GPU time goes: one process, the broken nrm2 kernel, timed step by step.

    python benchmarks/autotune_cost.py --trials 3

For each trial the case module is loaded afresh (a new Autotuner, as a case trial does), then
the first call (which benchmarks every config) and the second call are timed; one config's
``triton.testing.do_bench`` alone is timed too. Prints the device and versions first.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--n", type=int, default=10_000_019)
    args = p.parse_args(argv)
    import torch
    import triton
    if not torch.cuda.is_available():
        print("error: no GPU here", file=sys.stderr)
        return 2
    print(f"{torch.cuda.get_device_name()}; torch {torch.__version__}, triton {triton.__version__}")
    x = torch.randn(args.n, device="cuda")
    case = ROOT / "cases" / "nrm2-atomics" / "broken.py"
    for t in range(args.trials):
        t0 = time.perf_counter()
        mod = load(case, f"nrm2_broken_{t}")
        t1 = time.perf_counter()
        mod.nrm2(x)
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        mod.nrm2(x)
        torch.cuda.synchronize()
        t3 = time.perf_counter()
        timings = getattr(mod.sumsq_kernel, "configs_timings", None) or {}
        bench = getattr(mod.sumsq_kernel, "bench_time", None)
        print(f"trial {t}: load {t1 - t0:.2f} s, first call {t2 - t1:.2f} s (benchmarking "
              f"{len(timings)} configs; autotuner's own bench_time {bench if bench is None else round(bench, 2)} s), "
              f"second call {1e3 * (t3 - t2):.1f} ms")
    out = torch.zeros(1, device="cuda")
    kern = mod.sumsq_kernel.fn
    n = args.n
    t0 = time.perf_counter()
    ms = triton.testing.do_bench(lambda: kern[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024, num_warps=4))
    print(f"do_bench of one config: {time.perf_counter() - t0:.3f} s wall, {ms * 1e3:.1f} us a launch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
