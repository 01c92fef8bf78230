"""Glue for sglang-eagle-topk1-nan-picks-masked-tail: sglang's own draft_topk1_postprocess,
the fused greedy (top-k = 1) step of EAGLE drafting: a split argmax over the vocabulary
(8192 logits per program), a finalize kernel per row, and positions advanced in place.

``nan_rows`` rows of the draft logits get one NaN logit each (a degenerate draft row);
with the default 0 every logit is finite. The result is the chosen token id per row.
"""

import torch

from harness.bugs.source import load


def _mod(variant):
    return load(__file__, variant)


def _run(mod, next_token_logits, positions):
    _, topk_index = mod.draft_topk1_postprocess(next_token_logits, positions)
    return topk_index.reshape(-1)


def launch_buggy(next_token_logits, positions):
    return _run(_mod("buggy"), next_token_logits, positions)


def launch_fixed(next_token_logits, positions):
    return _run(_mod("fixed"), next_token_logits, positions)


FUZZ = {"bs": (1, 8), "vocab": (1, 40000), "nan_rows": (0, 8)}


def make_inputs(*, device, gen, bs=4, vocab=32000, nan_rows=0):
    logits = torch.randn(bs, vocab, generator=gen) * 3.0
    for r in range(min(nan_rows, bs)):
        logits[r, int(torch.randint(0, vocab, (1,), generator=gen))] = float("nan")
    positions = torch.randint(0, 4096, (bs,), generator=gen, dtype=torch.int64)
    return {"next_token_logits": logits.to(device), "positions": positions.to(device)}


def reference(next_token_logits, positions):
    """Greedy choice over the real vocabulary, a NaN logit never winning (the fix's contract:
    NaN counts as a very negative logit; an all-NaN row gives token 0)."""
    return torch.nan_to_num(next_token_logits.double(), nan=-1e30).argmax(dim=1)
