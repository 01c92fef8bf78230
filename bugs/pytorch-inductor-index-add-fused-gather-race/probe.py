"""Glue for pytorch-inductor-index-add-fused-gather-race (a reproduction: repro.py beside
this file). ``n`` nodes with ``dim`` features are split into ``ngraphs`` graphs (sorted
graph ids, as a PyG batch vector); the kernel normalises each node's f**2 + c by its
graph's total. The buggy kernel reads the per-graph totals in the same launch that is
still adding into them, so a graph whose nodes span more than one program of 128 lanes
gets partial totals.
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from repro import per_graph_normalise  # noqa: E402

FUZZ = {"n": (1, 4096), "dim": (1, 8), "ngraphs": (1, 16)}


def _ngraphs(batch):
    return int(batch.max()) + 1 if batch.numel() else 1


def launch_buggy(f, batch):
    return per_graph_normalise(f.contiguous(), batch.contiguous(), _ngraphs(batch), fixed=False)


def launch_fixed(f, batch):
    return per_graph_normalise(f.contiguous(), batch.contiguous(), _ngraphs(batch), fixed=True)


def make_inputs(*, device, gen, n=96, dim=8, ngraphs=4):
    f = torch.randn(n, dim, generator=gen)
    batch = torch.randint(0, max(ngraphs, 1), (n,), generator=gen).sort().values
    return {"f": f.to(device), "batch": batch.to(device)}


def reference(f, batch):
    f = f.double()
    fu = f * f + 0.00987654321
    acc = torch.zeros(_ngraphs(batch), f.shape[1], dtype=torch.float64, device=f.device)
    acc.index_add_(0, batch.long(), fu)
    return fu / (acc[batch.long()] + 1e-6)
