"""Glue for torchao's triton_fp8_blockwise_act_quant_lhs (blockwise FP8 training): the
(1 x block_size) row-wise scales of an (M, K) activation, stored column-major, called
through torchao's own launcher. The upstream module's two package imports that the kernel
does not need are stubbed (the FP8 dtype it defaults to, and two layout helpers of the MoE
code)."""

import torch

from harness.bugs.source import load

BLOCK = 128
FP8 = torch.float8_e4m3fn
FP8_MAX = torch.finfo(FP8).max
EPS = 1e-12  # the module's clamp of the absmax
NUM_GROUPS = 32  # rows per program: one of the module's own autotune configs

STUBS = {
    "torchao.float8.config": {"e4m3_dtype": FP8},
    "torchao.prototype.moe_training.utils": {
        "_is_column_major": lambda t: t.dim() == 2 and t.stride(0) == 1,
        "_is_row_major": lambda t: t.dim() == 2 and t.stride(1) == 1,
    },
}


def _run(variant, x):
    import triton

    mod = load(__file__, variant, stubs=STUBS)
    # one of the module's 45 autotune configs instead of all of them (each is a full run in
    # the interpreter); the bug needs only M not to be a multiple of its NUM_GROUPS
    mod.triton_fp8_blockwise_act_quant_lhs_kernel.configs = [
        triton.Config({"NUM_GROUPS": NUM_GROUPS}, num_warps=4, num_stages=2)]
    y, s = mod.triton_fp8_blockwise_act_quant_lhs(x, BLOCK, FP8)
    # the reciprocal scales, (M, K // 128) column-major. The FP8 values are left out: Triton
    # 3.7's interpreter rounds float32 -> float8_e4m3fn wrongly where the rounding carries into
    # the exponent (127.9 -> 64), and the bug is in the scales.
    return s


def launch_buggy(x):
    return _run("buggy", x)


def launch_fixed(x):
    return _run("fixed", x)


def make_inputs(*, device, gen, m=256, k_blocks=4):
    # K = 128 * k_blocks: the launcher asserts K is a multiple of the block size; m need not be
    return {"x": torch.randn(m, BLOCK * k_blocks, generator=gen).to(device)}


def reference(x):
    """Per row and 128 columns: amax (clamped at EPS), scale = 448 / amax in float64 then
    float32 as the kernel does, and its reciprocal."""
    x32 = x.to(torch.float32)
    m, k = x32.shape
    amax = x32.abs().view(m, k // BLOCK, BLOCK).amax(dim=2).clamp(min=EPS).to(torch.float64)
    scale = (FP8_MAX / amax).to(torch.float32)
    return (1.0 / scale).to(torch.float64)


FUZZ = {"m": (1, 300), "k_blocks": (1, 4)}
