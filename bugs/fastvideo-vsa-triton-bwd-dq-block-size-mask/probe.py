"""Glue for fastvideo-kernel's Video Sparse Attention (VSA) Triton path,
fastvideo_kernel/triton_kernels/block_sparse_attn_triton.py: block-sparse attention over 64-token
video tiles, each tile holding variable_block_sizes[tile] real tokens followed by padding. The glue
does what the package's autograd op (block_sparse_attn.py: block_sparse_attn_triton and
block_sparse_attn_backward_triton, torch custom ops registered for CUDA only) does: map_to_index of the
block map and of its transpose (the package's Triton map_to_index_kernel), the forward launcher
triton_block_sparse_attn_forward (o and the log-sum-exp M), then the backward launcher
triton_block_sparse_attn_backward with dO. It returns dQ, dK and dV, one after another.

The kernels loop with Python's ``for blk_idx in range(n)``; compiled Triton makes the loop variable
an int32 scalar, and 0.2.6's _attn_bwd_dq calls ``(blk_idx % 2).to(tl.int32)`` on it. The interpreter
gives Python ints there (the harness's "range-int32" fix covers tl.range only), so under
TRITON_INTERPRET=1 the glue gives the kernel module a ``range`` yielding int32 scalars, for both
versions (nothing else in the module calls range)."""

import builtins
import importlib
import math
import os

import torch

from harness.bugs.source import load


def _int32_loop_variables(mod):
    """Under the interpreter, the kernel module's ``range`` yields int32 scalars, as compiled
    Triton's loop variables are."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        return
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    def int32_range(*args):
        for i in builtins.range(*args):
            yield tl.tensor(interpreter.TensorHandle(np.array([i], dtype=np.int32), tl.int32), tl.int32)

    mod.range = int32_range


def _run(variant, q, k, v, do, block_map, variable_block_sizes):
    mod = load(__file__, variant)
    _int32_loop_variables(mod)
    index = importlib.import_module("fastvideo_kernel.triton_kernels.index")
    q2k_idx, q2k_num = index.map_to_index(block_map)
    k2q_idx, k2q_num = index.map_to_index(block_map.transpose(-1, -2).contiguous())
    o, M = mod.triton_block_sparse_attn_forward(q, k, v, q2k_idx, q2k_num, variable_block_sizes)
    dq, dk, dv = mod.triton_block_sparse_attn_backward(do, q, k, v, o, M, q2k_idx, q2k_num, k2q_idx, k2q_num,
                                                        variable_block_sizes)
    return torch.cat([dq.flatten(), dk.flatten(), dv.flatten()])


def launch_buggy(q, k, v, do, block_map, variable_block_sizes):
    return _run("buggy", q, k, v, do, block_map, variable_block_sizes)


def launch_fixed(q, k, v, do, block_map, variable_block_sizes):
    return _run("fixed", q, k, v, do, block_map, variable_block_sizes)


def make_inputs(*, device, gen, heads=2, head_dim=128, num_blocks=8, topk=2):
    """As fastvideo-kernel's tests/test_vsa.py makes them: tile sizes randint(16, 64) per 64-token
    tile (generate_variable_block_sizes), q, k, v and dO randn in bfloat16 for the real tokens,
    scattered into zero-padded (1, heads, num_blocks * 64, head_dim) tensors (vsa_pad), and a block
    map keeping the topk highest of rand scores per query tile and head
    (tests/utils.py generate_block_sparse_mask_for_function)."""
    sizes = torch.randint(16, 65, (num_blocks,), generator=gen, dtype=torch.int32)
    t = num_blocks * 64
    pos = torch.arange(t)
    real = (pos % 64) < sizes.repeat_interleave(64)

    def padded():
        x = torch.randn(1, heads, t, head_dim, generator=gen).to(torch.bfloat16)
        return x * real[None, None, :, None]

    q, k, v, do = padded(), padded(), padded(), padded()
    scores = torch.rand(heads, num_blocks, num_blocks, generator=gen)
    top = torch.topk(scores, min(topk, num_blocks), dim=-1).indices
    block_map = torch.zeros(heads, num_blocks, num_blocks, dtype=torch.bool)
    block_map.scatter_(-1, top, True)
    return {"q": q.to(device), "k": k.to(device), "v": v.to(device), "do": do.to(device),
            "block_map": block_map[None].to(device), "variable_block_sizes": sizes.to(device)}


def reference(q, k, v, do, block_map, variable_block_sizes):
    """Attention of every (padded) query row over the real keys of the tiles its query tile keeps
    (scale 1/sqrt(head_dim)), in float64; dQ, dK, dV by autograd with the given dO."""
    t, d = q.shape[2], q.shape[3]
    pos = torch.arange(t, device=q.device)
    real = (pos % 64) < variable_block_sizes.to(q.device).long().repeat_interleave(64)
    keep = block_map.bool().repeat_interleave(64, dim=-2).repeat_interleave(64, dim=-1) & real[None, None, None, :]
    q, k, v = (x.detach().to(torch.float64).requires_grad_() for x in (q, k, v))
    logits = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d)
    o = torch.matmul(torch.softmax(logits.masked_fill(~keep, float("-inf")), dim=-1), v)
    dq, dk, dv = torch.autograd.grad(o, (q, k, v), do.to(torch.float64))
    return torch.cat([dq.flatten(), dk.flatten(), dv.flatten()])


FUZZ = {"heads": (1, 16), "num_blocks": (1, 16), "topk": (1, 6)}
