"""A histogram by load, add one, store: duplicate bins lose their updates.

Each program loads a block of ``BLOCK`` integer values, reads the current count of
each value's bin, adds one and stores it back. That is the sequential loop
``hist[v] += 1`` written as three vector operations, and it is only right when every
index in the vector is different, which a histogram never promises:

- *within a block*: when two lanes hold the same bin, both load the same old count
  and both store ``old + 1``; one increment is lost. With 1024 values and a few
  hundred bins, nearly every bin appears several times in every block.
- *across programs*: another program can load a bin between this program's load
  and store, and one of the two programs' increments is overwritten.

Under ``TRITON_INTERPRET=1`` the programs run one after another, so the second kind
of loss disappears, but the first does not: the load reads every lane's count
before the store writes any, so each program adds exactly one to each bin it
touches, however often the bin occurs in its block. The counts come out too low,
the same on every run. On a GPU both kinds of loss happen.
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
    counts = tl.load(hist_ptr + bins, mask=mask)  # BUG: lanes with the same bin all read the same old count
    tl.store(hist_ptr + bins, counts + 1, mask=mask)  # BUG: ... and store old + 1; other programs race here too


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
