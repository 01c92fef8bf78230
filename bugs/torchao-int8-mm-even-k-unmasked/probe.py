"""Glue for torchao's INT8 training matmul (torchao/prototype/quantized_training/int8_mm.py):
scaled_int8_mm_cuda, the function the module registers as the CUDA implementation of
torch.ops.torchao.scaled_int8_mm, called directly (on a CPU-only machine the op has no
kernel to dispatch to, and the interpreter runs the same launcher)."""

import torch

from harness.bugs.source import load

# one of the module's 27 autotune configs (BLOCK_M, BLOCK_N, BLOCK_K, num_stages, num_warps)
# instead of timing them all in the interpreter; any with K % BLOCK_K != 0 shows the bug
CONFIG = (64, 64, 32, 2, 4)


def _run(variant, A, B, row_scale, col_scale):
    import triton

    mod = load(__file__, variant)
    bm, bn, bk, stages, warps = CONFIG
    mod._scaled_int8_mm_kernel.configs = [
        triton.Config(dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk), num_stages=stages, num_warps=warps)]
    return mod.scaled_int8_mm_cuda(A, B, row_scale, col_scale)


def launch_buggy(A, B, row_scale, col_scale):
    return _run("buggy", A, B, row_scale, col_scale)


def launch_fixed(A, B, row_scale, col_scale):
    return _run("fixed", A, B, row_scale, col_scale)


def make_inputs(*, device, gen, m=64, n=96, k=256):
    A = torch.randint(-127, 128, (m, k), generator=gen, dtype=torch.int8)
    B = torch.randint(-127, 128, (k, n), generator=gen, dtype=torch.int8)
    row_scale = torch.rand(m, generator=gen) / 127
    col_scale = torch.rand(n, generator=gen) / 127
    return {k_: v.to(device) for k_, v in
            {"A": A, "B": B, "row_scale": row_scale, "col_scale": col_scale}.items()}


def reference(A, B, row_scale, col_scale):
    return (A.double() @ B.double()) * row_scale.double()[:, None] * col_scale.double()[None, :]


FUZZ = {"m": (1, 200), "n": (1, 200), "k": (1, 400)}
