"""A histogram by one ``tl.atomic_add`` per value: every increment lands.

The load, the add and the store become one ``tl.atomic_add(hist_ptr + bins, 1)``: each
lane's read-modify-write of its bin is indivisible, whether the other writer is a lane
of the same block with the same bin or another program. Integer addition is
associative, so the order in which the atomics land does not matter: the counts are
exact and the same on every run.

With few bins this sends millions of atomics to the same few hundred addresses, which
the memory system must serialise. fast.py, beside this file, counts each block's
values inside the program first (``tl.histogram``) and sends one atomic per bin per
program, from larger blocks.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bins = tl.load(x_ptr + offs, mask=mask, other=0)
    tl.atomic_add(hist_ptr + bins, 1, mask=mask)  # FIX: one indivisible increment per lane, duplicates included


def histogram(x: torch.Tensor, num_bins: int) -> torch.Tensor:
    n = x.numel()
    hist = torch.zeros(num_bins, device=x.device, dtype=torch.int32)
    histogram_kernel[(triton.cdiv(n, 1024),)](x, hist, n, BLOCK=1024)
    return hist


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
