"""Inputs and reference for sum-reduction-store-race: the sum of one fp32 vector.

The values are uniform in [0, 1), so the sum (about n / 2) has no cancellation and
one block's sum (about 512) is far from it. n is prime, so the last block is partial;
the vector sits inside NaN padding.
"""

import torch

from harness.buffers import guarded


def make_inputs(*, device, gen, n):
    return {"x": guarded(torch.rand(n, generator=gen), device)}


def reference(x):
    return x.double().sum()
