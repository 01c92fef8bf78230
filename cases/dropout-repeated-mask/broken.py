"""Seeded dropout whose random numbers restart in every block: all blocks drop the same positions.

Triton's ``tl.rand(seed, offsets)`` is counter-based (Philox): the number for a
given ``(seed, offset)`` is always the same, and different offsets give independent
numbers. That is what makes the low-memory dropout of Triton's tutorials work: keep
the seed, and the mask can be regenerated in the backward pass instead of stored.
It also means that the offsets must be unique across the whole tensor.

This kernel passes ``tl.arange(0, BLOCK)``, the offsets *within* the block. Every
program draws the same ``BLOCK`` numbers, so element ``j`` of every block is kept or
dropped together: the mask is one random pattern of 1024 entries, tiled over the
tensor. Each block on its own looks right (about a fraction ``p`` dropped, the
survivors scaled by ``1 / (1 - p)``), the mean and variance of the output are right,
and a test that only checks the drop rate passes. Across blocks the "random" drops
are perfectly correlated.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    r = tl.rand(seed, tl.arange(0, BLOCK))  # BUG: offsets within the block: every program draws the same numbers
    out = tl.where(r > p, x / (1 - p), 0.0)
    tl.store(out_ptr + offsets, out, mask=mask)


def dropout(x: torch.Tensor, p: float, seed: int, out: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    dropout_kernel[(triton.cdiv(n, 1024),)](x, out, n, p, seed, BLOCK=1024)
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
