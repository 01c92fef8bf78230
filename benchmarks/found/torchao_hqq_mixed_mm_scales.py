"""torchao 0.18.0's HQQ int4 matmul (torchao/prototype/hqq: ``triton_mixed_mm`` and the kernel ``_mixed_mm_kernel`` in
kernels.py), called as released, against the dequantized weight multiplied in torch. The kernel finds each K
step's row of scales and zeros as ``k * BLOCK_K * SPLIT_K * stride_scale_k // QGROUP_SIZE`` (kernels.py:320):

- the program's split (``pid_z``) is left out, so with ``SPLIT_K > 1`` every split of a step reads the first
  split's group, wrong as soon as ``BLOCK_K * SPLIT_K`` spans more than one group (split-K configs are in
  ``kernel_type="max_autotune"``'s list, for float16);
- the division comes after the multiplication by the row stride, so the row is right only when the scales'
  row stride is 1 (the transposed view HQQ's own integration passes); for a contiguous ``(num_groups, N)`` tensor,
  the shape the docstring asks for, any config whose ``BLOCK_K`` is smaller than the group reads the middle of
  a row (the default ``kernel_type="compute_bound"`` has such configs for a group of 64 or more).

Which config runs is the autotuner's choice, by time. On a CPU (the Triton interpreter) the script runs the
package's own heuristics-wrapped kernel (``kernels._mixed_mm``) with configs taken from the package's lists, as
the autotuner launches them (``init_to_zero("C")`` before a split-K one), and prints which are wrong. With
``--gpu`` it calls ``triton_mixed_mm`` itself, autotuned, and prints the config the autotuner chose and the error.
On the CPU it also calls ``triton_mixed_mm`` as a user does (the default ``kernel_type``, autotuned with the
casebook's CPU timer) with groups of 256, where every config of the default list has ``BLOCK_K`` below the group,
so a contiguous scales tensor is misread whichever config wins.

    pip install --no-deps --target /tmp/torchao torchao==0.18.0
    python benchmarks/found/torchao_hqq_mixed_mm_scales.py /tmp/torchao           # CPU, interpreter
    python benchmarks/found/torchao_hqq_mixed_mm_scales.py /tmp/torchao --gpu     # a CUDA GPU, compiled

Only torchao/prototype/hqq is imported (torchao's own ``__init__``, with its compiled extensions, is skipped).

Exit 1 when some result is wrong, 0 when none is, 2 when torchao cannot be imported.
"""

import os
import sys
from pathlib import Path

GPU = "--gpu" in sys.argv[1:]
if not GPU:
    os.environ.setdefault("TRITON_INTERPRET", "1")


def problem(M, K, N, group, layout, device, torch):
    """(a, packed b, scales, zeros, reference) for an int4 weight (K, N) with groups of ``group`` rows of K."""
    from torchao.prototype.hqq import pack_2xint4

    gen = torch.Generator().manual_seed(M * 7 + K + N + group)
    a = torch.randn(M, K, generator=gen).to(torch.float16)
    wq = torch.randint(0, 16, (K, N), generator=gen, dtype=torch.uint8)
    scales = (torch.rand(K // group, N, generator=gen) + 0.5).to(torch.float16)
    zeros = torch.randint(0, 16, (K // group, N), generator=gen).to(torch.float16)
    ref = a.double() @ ((wq.double() - zeros.double().repeat_interleave(group, 0))
                        * scales.double().repeat_interleave(group, 0))
    if layout == "HQQ's view":  # stride (1, num_groups): the (N, num_groups) tensor transposed, as HQQ passes it
        scales, zeros = scales.T.contiguous().T, zeros.T.contiguous().T
    b = pack_2xint4(wq)
    return [t.to(device) for t in (a, b, scales, zeros)] + [ref]


def rel_err(c, ref):
    return ((c.double().cpu() - ref).abs().max() / ref.abs().max()).item()


def run_cpu(torch, triton):
    from torchao.prototype.hqq import kernels

    M, K, N = 16, 512, 64
    cases = [  # (group, layout, the package's config values): each from get_configs_io_bound / _compute_bound
        (64, "HQQ's view", dict(BLOCK_M=16, BLOCK_N=64, BLOCK_K=32, SPLIT_K=1)),
        (64, "HQQ's view", dict(BLOCK_M=16, BLOCK_N=64, BLOCK_K=32, SPLIT_K=2)),
        (64, "HQQ's view", dict(BLOCK_M=16, BLOCK_N=64, BLOCK_K=32, SPLIT_K=4)),
        (128, "HQQ's view", dict(BLOCK_M=16, BLOCK_N=64, BLOCK_K=64, SPLIT_K=4)),
        (128, "HQQ's view", dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=32, SPLIT_K=8)),
        (128, "contiguous", dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=128, SPLIT_K=1)),
        (128, "contiguous", dict(BLOCK_M=64, BLOCK_N=128, BLOCK_K=64, SPLIT_K=1)),
        (128, "contiguous", dict(BLOCK_M=128, BLOCK_N=64, BLOCK_K=32, SPLIT_K=1)),
    ]
    wrong = False
    for group, layout, cfg in cases:
        a, b, scales, zeros, ref = problem(M, K, N, group, layout, "cpu", torch)
        c = torch.zeros(M, N, dtype=torch.float16)  # init_to_zero("C"): the split-K configs' pre_hook
        grid = (triton.cdiv(M, cfg["BLOCK_M"]) * triton.cdiv(N, cfg["BLOCK_N"]), cfg["SPLIT_K"])
        kernels._mixed_mm[grid](
            a, b, scales, zeros, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
            c.stride(0), c.stride(1), scales.stride(0), scales.stride(1),
            TRANSPOSED=False, IS_BFLOAT16=False, QGROUP_SIZE=group, acc_dtype=kernels.tl.float32,
            input_precision="ieee", fp8_fast_accum=False, **cfg)
        err = rel_err(c, ref)
        bad = not err <= 1e-2  # NaN (scales read past the end) counts as wrong
        wrong |= bad
        print(f"group {group}, scales {layout} (stride {tuple(scales.stride())}), {cfg}: "
              f"max error / max |reference| = {err:.2e}: {'wrong' if bad else 'right'}")
    # the public function as a user calls it (kernel_type="compute_bound", autotuned: the casebook's CPU timer
    # stands in for the GPU's). With a group of 256 every compute_bound config has BLOCK_K < group, so a
    # contiguous (num_groups, N) scales tensor is misread whichever config the autotuner picks.
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for harness.run
    from torchao.prototype.hqq import triton_mixed_mm

    from harness.run.triton_compat import patched

    with patched(interpreter=True, bench_calls=1):
        for layout in ("HQQ's view", "contiguous"):
            a, b, scales, zeros, ref = problem(M, K, N, 256, layout, "cpu", torch)
            err = rel_err(triton_mixed_mm(a, b, scales, zeros, 256), ref)
            bad = not err <= 1e-2  # NaN (scales read past the end) counts as wrong
            wrong |= bad
            best = kernels.mixed_mm_kernel_compute_bound.best_config.kwargs
            print(f"triton_mixed_mm(a, b, scales, zeros, 256), scales {layout} (stride {tuple(scales.stride())}), "
                  f"autotuner chose BLOCK_K={best['BLOCK_K']}: max error / max |reference| = {err:.2e}: "
                  f"{'wrong' if bad else 'right'}")
            kernels.mixed_mm_kernel_compute_bound.cache.clear()
    return wrong


def run_gpu(torch):
    from torchao.prototype.hqq import kernels, triton_mixed_mm

    wrong = False
    # HQQ's own layout first: a contiguous scales tensor reads past its end, which a GPU may fault on, and a
    # fault ends the process. max_autotune's list has over 400 configs: one shape only, tuned once (key M, N, K)
    runs = [(kernel_type, tuner, shape, group, layout)
            for layout in ("HQQ's view", "contiguous")
            for kernel_type, tuner, shapes in (
                ("compute_bound", kernels.mixed_mm_kernel_compute_bound,
                 ((16, 4096, 4096), (64, 4096, 4096), (1, 4096, 11008))),
                ("max_autotune", kernels.mixed_mm_kernel_max_autotune, ((16, 4096, 4096),)))
            for shape in shapes for group in (64, 128)]
    # compile time: max_autotune's list is 80 tile shapes x 5 num_stages plus 18; keep its num_stages=3 ones
    # (every tile shape, split-K or not) so the tuning compiles about 100 kernels, not 400
    tuner = kernels.mixed_mm_kernel_max_autotune
    before = len(tuner.configs)
    tuner.configs = [c for c in tuner.configs if c.num_stages == 3]
    print(f"max_autotune: {len(tuner.configs)} of its {before} configs kept (num_stages=3)", flush=True)
    for kernel_type, tuner, (M, K, N), group, layout in runs:
            a, b, scales, zeros, ref = problem(M, K, N, group, layout, "cuda", torch)
            c = triton_mixed_mm(a, b, scales, zeros, group, kernel_type=kernel_type)
            torch.cuda.synchronize()
            err = rel_err(c, ref)
            bad = not err <= 1e-2  # NaN (scales read past the end) counts as wrong
            wrong |= bad
            best = tuner.best_config
            print(f"{kernel_type}, M={M} K={K} N={N}, group {group}, scales {layout}: chosen "
                  f"BLOCK_M={best.kwargs['BLOCK_M']} BLOCK_N={best.kwargs['BLOCK_N']} "
                  f"BLOCK_K={best.kwargs['BLOCK_K']} SPLIT_K={best.kwargs['SPLIT_K']}; max error / max "
                  f"|reference| = {err:.2e}: {'wrong' if bad else 'right'}", flush=True)
    return wrong


def main(site: str) -> int:
    sys.path.insert(0, site)
    import torch
    import triton

    import types
    from importlib.metadata import PathDistribution

    # only torchao/prototype/hqq is imported: torchao's own __init__ (its compiled extensions, built for one torch)
    # is not needed by these two pure-Python files and is skipped, so any torch the machine has will do
    root = Path(site) / "torchao"
    dist = next(Path(site).glob("torchao-*.dist-info"), None)
    if not (root / "prototype" / "hqq" / "kernels.py").is_file() or dist is None:
        print(f"error: torchao not installed in {site} (pip install --no-deps --target {site} torchao==0.18.0)",
              file=sys.stderr)
        return 2
    from _released import bare_packages

    bare_packages({"torchao": root, "torchao.prototype": root / "prototype"})
    import torchao.prototype.hqq  # noqa: F401

    torchao = types.SimpleNamespace(__version__=PathDistribution(dist).version)
    from _released import run_on

    if run_on(GPU, f"torchao {torchao.__version__}") is None:
        return 2
    wrong = run_gpu(torch) if GPU else run_cpu(torch, triton)
    return 1 if wrong else 0


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--gpu"]
    sys.exit(main(args[0] if args else "."))
