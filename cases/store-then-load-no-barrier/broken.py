"""Fused RMSNorm + RoPE that stages the normalised vector in ``out`` and reads it back without a barrier.

RoPE needs ``rotate_half(y)``: element ``d`` of the result combines ``y[d]`` with
``y[d +- D/2]``. When ``y`` is computed inside the kernel (here, by the RMSNorm),
Triton has no operation that reads another element of a register tensor by index,
so a common trick is a round trip through global memory: store ``y`` to ``out``,
load it back with the partner offsets, and store the final result over it.

A Triton program looks like one thread of control, but it runs as many hardware
threads (``num_warps`` x 32), each holding a slice of every tensor. ``tl.store``
and ``tl.load`` are executed by each thread for its own elements, and the partner
of element ``d`` is held by a different thread, usually in a different warp.
Nothing makes the warps wait for each other between the store and the load: a warp
that gets there first reads its partners' elements of ``out`` before the warps that
own them have stored them, and gets the canary (or last call's values) instead of
``y``. The same holds the other way round for the final store, which can overwrite
an element another warp has not read yet. Triton inserts barriers for its own
shared-memory traffic, not for global memory. Under ``TRITON_INTERPRET=1`` each
``tl.store`` completes for the whole block before the next operation starts, so the
interpreter never shows it.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def norm_rope_kernel(x_ptr, w_ptr, cos_ptr, sin_ptr, out_ptr, n_heads, eps, D: tl.constexpr):
    row = tl.program_id(0)  # one head of one token
    token = row // n_heads
    d = tl.arange(0, D)
    x = tl.load(x_ptr + row * D + d)
    y = x * tl.rsqrt(tl.sum(x * x, axis=0) / D + eps) * tl.load(w_ptr + d)
    tl.store(out_ptr + row * D + d, y)  # BUG: staged for the other threads, but nothing makes them wait for it
    partner = tl.load(out_ptr + row * D + (d + D // 2) % D)  # BUG: y[d +- D/2], stored by another warp: maybe not yet
    rot = tl.where(d < D // 2, -partner, partner)  # rotate_half(y)
    c = tl.load(cos_ptr + token * D + d)
    s = tl.load(sin_ptr + token * D + d)
    tl.store(out_ptr + row * D + d, y * c + rot * s)


def norm_rope(x: torch.Tensor, w: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
              out: torch.Tensor) -> torch.Tensor:
    rows, d = x.shape
    norm_rope_kernel[(rows,)](x, w, cos, sin, out, rows // cos.shape[0], 1e-6, D=d)
    return out
