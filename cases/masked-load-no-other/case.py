"""Inputs and reference for masked-load-no-other: greedy decoding from log-probabilities.

Each row holds the log-probabilities of one sequence position over a vocabulary whose
size is not a power of two (``log_softmax`` of random logits), so every value is
negative and each row's block has padding lanes. The kernel returns the index of each
row's largest log-probability; the reference is ``argmax`` in float64. A padding lane
that reads 0 is larger than every real entry, so the bug shows as a token id at or past
the end of the vocabulary. ``logp`` has NaN padding between its rows (``row_pad``), so a
kernel that read past a row would pick up NaN; ``out`` is filled with a canary.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, n_rows, vocab):
    logp = torch.log_softmax(3.0 * torch.randn(n_rows, vocab, generator=gen), dim=1)
    return {
        "logp": guarded(logp, device, row_pad=16),
        "out": output((n_rows,), torch.int64, device),
    }


def reference(logp):
    return logp.double().argmax(dim=1)
