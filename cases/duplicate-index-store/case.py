"""Inputs and reference for duplicate-index-store: for each token id, its last position in the row.

ids is (rows, seq_len) int32 drawn from a vocabulary much smaller than seq_len, so
every id occurs several times in a row; it sits inside padding between and around
the rows. last is (rows, vocab) int32 inside canary padding; -1 marks ids that do
not occur.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, rows, seq_len, vocab):
    ids = torch.randint(0, vocab, (rows, seq_len), generator=gen, dtype=torch.int32)
    return {
        "ids": guarded(ids, device, row_pad=16),
        "last": output((rows, vocab), torch.int32, device),
    }


def reference(ids, last):
    rows, seq_len = ids.shape
    pos = torch.arange(seq_len, device=ids.device).expand(rows, seq_len)
    out = torch.full((rows, last.shape[1]), -1, dtype=torch.int64, device=ids.device)
    return out.scatter_reduce(1, ids.long(), pos, reduce="amax")  # the sequential loop's answer
