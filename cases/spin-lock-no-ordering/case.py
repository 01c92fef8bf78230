"""Inputs and reference for spin-lock-no-ordering: the suffix sums of an int32 vector.

``out[i] = x[i] + x[i + 1] + ... + x[n - 1]`` (a reverse cumulative sum: "how many
tokens are still to come", discounted returns with a discount of 1). The values are
small non-negative integers, so every sum is exact in int32 and the comparison is
exact: the only way to fail is to hang, or to add the wrong carries.

n is not a multiple of the block, and on the GPU it makes ~9,800 programs: far more
than an H100 or H200 keeps resident at once, which is what the broken kernel needs
to deadlock. The interpreter size makes 10 programs.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, n):
    return {
        "x": guarded(torch.randint(0, 10, (n,), generator=gen, dtype=torch.int32), device),
        "out": output((n,), torch.int32, device),
    }


def reference(x):
    return x.long().flip(0).cumsum(0).flip(0)
