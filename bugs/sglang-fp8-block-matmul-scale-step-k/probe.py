"""Glue for sglang-fp8-block-matmul-scale-step-k: sglang's own w8a8_block_fp8_matmul_triton
(block-wise FP8 GEMM: A is (M, K) fp8 with per-token-group scales As (M, K/128), B is
(N, K) fp8 with per-block scales Bs (N/128, K/128)).

The launcher takes its tile sizes from a tuned JSON table when one exists for the GPU and
the (N, K) shape, else a default whose BLOCK_SIZE_K equals the quantisation group (128).
The tuned tables that shipped include BLOCK_SIZE_K = 64 for some shapes; the glue stands in
for such a table (get_w8a8_block_fp8_configs returns one entry with ``block_k_tile``), so
that the kernel runs the tiling the bug needs. ``block_k_tile = 128`` is the default path.
The module's package imports the kernel does not need are stubbed.
"""

import torch

from harness.bugs.source import load

GROUP = 128
FP8 = torch.float8_e4m3fn

STUBS = {
    "sglang.srt.layers.deep_gemm_wrapper": {"ENABLE_JIT_DEEPGEMM": False},
    "sglang.srt.utils": {
        "ceil_align": lambda x, a: -(-x // a) * a,
        "get_bool_env_var": lambda name, default="false": False,
        "get_device_core_count": lambda *a: 1,
        "get_device_name": lambda *a: "probe",
        "is_cpu": lambda: True,
        "is_cuda": lambda: False,
        "is_hip": lambda: False,
        "is_sm100_supported": lambda *a: False,
        "is_sm120_supported": lambda *a: False,
        "log_info_on_rank0": lambda *a, **k: None,
    },
    "sglang.srt.utils.custom_op": {"register_custom_op": lambda *a, **k: (lambda f: f)},
    "sglang.srt.utils.patch_torch": {"register_fake_if_exists": lambda *a, **k: (lambda f: f)},
}


def _run(variant, A, B, As, Bs, block_k_tile):
    mod = load(__file__, variant, stubs=STUBS)
    table = {1: {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": block_k_tile,
                 "GROUP_SIZE_M": 1, "num_warps": 4, "num_stages": 3}}
    mod.get_w8a8_block_fp8_configs = lambda N, K, bn, bk: table  # a tuned table, as on a GPU that has one
    return mod.w8a8_block_fp8_matmul_triton(A, B, As, Bs, [GROUP, GROUP], output_dtype=torch.float32)


def launch_buggy(A, B, As, Bs, block_k_tile):
    return _run("buggy", A, B, As, Bs, block_k_tile)


def launch_fixed(A, B, As, Bs, block_k_tile):
    return _run("fixed", A, B, As, Bs, block_k_tile)


def make_inputs(*, device, gen, m=16, n=128, k=256, block_k_tile=128):
    # k and n are multiples of the 128 quantisation group (the weights' block shape)
    A = (torch.randn(m, k, generator=gen) * 2).to(FP8)
    B = (torch.randn(n, k, generator=gen) * 2).to(FP8)
    # scales that differ from group to group, as real activations and weights have
    As = torch.rand(m, k // GROUP, generator=gen) * 0.09 + 0.01
    Bs = torch.rand(n // GROUP, k // GROUP, generator=gen) * 0.09 + 0.01
    return {"A": A.to(device), "B": B.to(device), "As": As.to(device), "Bs": Bs.to(device),
            "block_k_tile": block_k_tile}


def reference(A, B, As, Bs, block_k_tile):
    """C = (A * As expanded over each 128-column group) @ (B * Bs expanded over 128x128 blocks)^T."""
    a = A.to(torch.float64) * As.to(torch.float64).repeat_interleave(GROUP, dim=1)
    bs = Bs.to(torch.float64).repeat_interleave(GROUP, dim=0).repeat_interleave(GROUP, dim=1)
    b = B.to(torch.float64) * bs[: B.shape[0], : B.shape[1]]
    return a @ b.T


TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
FUZZ = {"m": (1, 64)}
