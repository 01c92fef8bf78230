"""Glue for the TorchInductor unmasked indirect load reproduction (repro.py beside this file).

launch_* gather out[i] = table[idx[i]] for i < n with XBLOCK = 128. When n is not a
multiple of 128, the buggy kernel's last block reads the table at addresses taken from
the masked-off lanes of the index load; those values are never stored, so the result
matches the reference and only the memory checker (--only memcheck) sees the bug.
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import repro  # noqa: E402


def launch_buggy(table, idx):
    return repro.gather(table, idx, torch.empty(idx.shape, dtype=table.dtype, device=table.device), False)


def launch_fixed(table, idx):
    return repro.gather(table, idx, torch.empty(idx.shape, dtype=table.dtype, device=table.device), True)


def make_inputs(*, device, gen, vocab=512, n=1024):
    table = torch.randn(vocab, generator=gen)
    idx = torch.randint(0, vocab, (n,), generator=gen)
    return {"table": table.to(device), "idx": idx.to(device)}


def reference(table, idx):
    return table[idx.long()]


FUZZ = {"vocab": (1, 2000), "n": (1, 3000)}
