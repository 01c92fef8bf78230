"""A reproduction of the first step of aiter's Triton attention backward (aiter/ops/triton/attention/
mha_onekernel_bwd.py: the launcher flash_attn_onekernel_backward, which the backward of aiter's Triton
flash_attn_func calls by default, and the kernel _bwd_preprocess in aiter/ops/triton/_triton_kernels/attention/
mha_onekernel_bwd.py): our own kernel and launcher with the same mechanism, launch pattern and arguments.

The launcher reads the BSHD layout (batch, seqlen_q, num_q_heads, head_dim) of O (the forward's output) and of
dO (the incoming gradient), turns each tensor's strides into (batch, head, seq, dim) order, allocates delta as
zeros in the shape of the softmax LSE, (batch, num_q_heads, seqlen_q) float32, and launches the preprocess
on the grid (cdiv(max_seqlen_q, PRE_BLOCK), batch, num_q_heads) with PRE_BLOCK = 128 (the preprocess block of
every default config upstream ships, gfx942/gfx950 MHA-DEFAULT.json) and the head dim padded to a power of 2
of at least 16 (masked where it is padded). Each program loads a BLOCK_M x head_dim tile of O and of dO, and
stores delta = rowsum(O * dO) in float32 for its rows. delta is what flash_attn_onekernel_backward returns
(its docstring) and what its dQ/dK kernel reads next: a wrong delta makes dQ and dK wrong.

Buggy, as up to commit 059c778's parent: the launcher computes dO's strides but passes only O's to the
kernel, which forms one offset from O's strides and reads both tensors at it. Fixed, as commit 059c778
(ROCm/aiter PR 2808): the kernel takes dO's own four strides and reads dO at an offset built from them,
and the launcher passes them. The two sides differ only there (a constexpr switch; on both sides the
kernel receives dO's strides, the buggy one ignores them as the buggy kernel had none).

Left out, neither the bug: the varlen (cu_seqlens) and FP8 (descale) branches of the kernel, and the dQ/dK/dV
kernel that runs after it (it reads dO through its own strides on both sides).
"""

import torch
import triton
import triton.language as tl

PRE_BLOCK = 128  # config["preprocess_kernel"]["PRE_BLOCK"] in aiter's gfx942 and gfx950 MHA-DEFAULT.json


@triton.jit
def _bwd_preprocess(o_ptr, do_ptr, delta_ptr,
                    so_b, so_h, so_m, so_k,
                    sdo_b, sdo_h, sdo_m, sdo_k,
                    sd_b, sd_h, sd_m,
                    max_seqlen_q,
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, HEAD_DIM_POW2: tl.constexpr,
                    DO_OWN_STRIDES: tl.constexpr):
    start_m = tl.program_id(0)
    b = tl.program_id(1)
    h = tl.program_id(2)
    rows = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, HEAD_DIM_POW2)
    row_ok = rows < max_seqlen_q
    tile_ok = row_ok[:, None]
    if HEAD_DIM != HEAD_DIM_POW2:
        tile_ok = tile_ok & (cols[None, :] < HEAD_DIM)
    o_off = b * so_b + h * so_h + rows[:, None] * so_m + cols[None, :] * so_k
    if DO_OWN_STRIDES:  # fixed (059c778): dO addressed through its own strides
        do_off = b * sdo_b + h * sdo_h + rows[:, None] * sdo_m + cols[None, :] * sdo_k
    else:  # BUG: dO read at the offsets built from O's strides
        do_off = o_off
    o_tile = tl.load(o_ptr + o_off, mask=tile_ok, other=0.0).to(tl.float32)
    do_tile = tl.load(do_ptr + do_off, mask=tile_ok, other=0.0).to(tl.float32)
    d = tl.sum(o_tile * do_tile, axis=1)
    tl.store(delta_ptr + b * sd_b + h * sd_h + rows * sd_m, d, mask=row_ok)


def _launch(o, do, fixed):
    assert o.dim() == 4 and do.shape == o.shape, (o.shape, do.shape)
    batch, seqlen_q, num_q_heads, head_dim = o.shape
    # bshd: strides reordered to (batch, head, seq, dim), as the launcher does for every tensor
    o_strides = (o.stride(0), o.stride(2), o.stride(1), o.stride(3))
    do_strides = (do.stride(0), do.stride(2), do.stride(1), do.stride(3))
    head_dim_pow2 = max(triton.next_power_of_2(head_dim), 16)
    delta = torch.zeros((batch, num_q_heads, seqlen_q), dtype=torch.float32, device=o.device)  # zeros_like(lse)
    grid = (triton.cdiv(seqlen_q, PRE_BLOCK), batch, num_q_heads)
    _bwd_preprocess[grid](o, do, delta, *o_strides, *do_strides, *delta.stride(), seqlen_q,
                          BLOCK_M=PRE_BLOCK, HEAD_DIM=head_dim, HEAD_DIM_POW2=head_dim_pow2,
                          DO_OWN_STRIDES=fixed)
    return delta


def launch_buggy(o, do):
    return _launch(o, do, False)


def launch_fixed(o, do):
    return _launch(o, do, True)


def make_inputs(*, device, gen, batch=2, seqlen_q=256, num_heads=32, head_dim=128, do_sbhd=0):
    """As the fix's regression test (op_tests/triton_tests/attention/test_mha.py, test_mha_backward_sbhd_do)
    makes them: float16, BSHD, batch 2, seqlen_q 256, 32 query heads, head size 128 (its smallest case, the
    defaults; FUZZ spans its batch 2 to 4 and seqlen 256 to 512, down to 1, and head sizes up to 128). O is a
    contiguous BSHD tensor, as the forward allocates it.
    do_sbhd (an input switch, 0 by default: dO as dense as O): 1 makes dO as the test does, a dense
    (seqlen_q, batch, heads, head_dim) tensor transposed to BSHD on the device (same shape, SBHD strides), the
    layout of a sequence-first model's gradient; it shapes no tensor."""
    o = torch.randn(batch, seqlen_q, num_heads, head_dim, generator=gen, dtype=torch.float16).to(device)
    if do_sbhd:  # transposed on the device: .to(device) of a view would arrive dense
        do = torch.randn(seqlen_q, batch, num_heads, head_dim, generator=gen,
                         dtype=torch.float16).to(device).transpose(0, 1)
    else:
        do = torch.randn(batch, seqlen_q, num_heads, head_dim, generator=gen, dtype=torch.float16).to(device)
    return {"o": o, "do": do}


def reference(o, do):
    """delta[b, h, m] = sum over the head dim of O[b, m, h, :] * dO[b, m, h, :]."""
    return (o * do).sum(-1).permute(0, 2, 1).contiguous()


FUZZ = {"batch": (1, 4), "seqlen_q": (1, 512), "num_heads": (1, 32), "head_dim": (8, 128), "do_sbhd": (0, 1)}
