"""Inputs and reference for histogram-lost-updates: counts of int32 values in [0, num_bins).

n is prime, so the last block is partial. The values sit inside padding that holds
int32's largest value, so a kernel that read past the end would index far outside
the histogram.
"""

import torch

from harness.buffers import guarded


def make_inputs(*, device, gen, n, num_bins):
    x = torch.randint(0, num_bins, (n,), generator=gen, dtype=torch.int32)
    return {"x": guarded(x, device), "num_bins": num_bins}


def reference(x, num_bins):
    return torch.bincount(x.long(), minlength=num_bins)


def torch_equivalent(x, num_bins):
    return torch.bincount(x, minlength=num_bins)


def bench_work(x, num_bins):
    return x.numel() * x.element_size() + num_bins * 4  # read x, write the int32 counts
