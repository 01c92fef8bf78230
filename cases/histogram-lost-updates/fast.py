"""A histogram that counts each block with ``tl.histogram``, then adds the counts with ``tl.atomic_add``.

``tl.histogram(bins, NUM_BINS, mask=mask)`` counts the block's values per bin inside
the program, duplicates included, and one ``tl.atomic_add`` per bin adds those counts
into the global histogram. Like fixed.py's one atomic per value it is exact and the
same on every run, but it sends one atomic per bin per program instead of one per
value, and with blocks of 8192 values there are 8 times fewer programs. This is the
version ``python -m harness bench histogram-lost-updates`` times.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def histogram_kernel(x_ptr, hist_ptr, n, num_bins, NUM_BINS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    bins = tl.load(x_ptr + offs, mask=mask, other=0)
    counts = tl.histogram(bins, NUM_BINS, mask=mask)  # count the block's values per bin, duplicates included
    b = tl.arange(0, NUM_BINS)
    tl.atomic_add(hist_ptr + b, counts, mask=b < num_bins)  # then one atomic per bin, not per value


def histogram(x: torch.Tensor, num_bins: int) -> torch.Tensor:
    n = x.numel()
    hist = torch.zeros(num_bins, device=x.device, dtype=torch.int32)
    NUM_BINS = triton.next_power_of_2(num_bins)  # tl.arange needs a power of two
    histogram_kernel[(triton.cdiv(n, 8192),)](x, hist, n, num_bins, NUM_BINS=NUM_BINS, BLOCK=8192)
    return hist


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
