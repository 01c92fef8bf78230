"""Glue for TransformerEngine's Triton cross-entropy (transformer_engine/pytorch/triton/cross_entropy.py).

The launcher is cross_entropy_forward(logits, target, label_smoothing=0, reduce_loss=True,
dist_process_group=None, ignore_idx) -> (mean loss, gradient left in the logits buffer);
the glue returns the mean loss as a one-element tensor. make_inputs sets the targets of
`ignored` tokens (spread over the batch) to ignore_idx, as padding would; ignored=0 gives
a batch without padding, where the buggy and fixed versions agree.
"""

import torch

from harness.bugs.source import load

IGNORE = -100


def _launch(variant, logits, target):
    mod = load(__file__, variant)
    loss, _ = mod.cross_entropy_forward(logits.clone(), target, 0.0, True, None, IGNORE)
    return loss.reshape(1)


def launch_buggy(logits, target):
    return _launch("buggy", logits, target)


def launch_fixed(logits, target):
    return _launch("fixed", logits, target)


def make_inputs(*, device, gen, seq=64, batch=2, vocab=1000, ignored=0):
    logits = torch.randn(batch, seq, vocab, generator=gen) * 2.0
    target = torch.randint(0, vocab, (batch, seq), generator=gen)
    n = min(ignored, batch * seq - 1)
    if n > 0:
        pick = torch.randperm(batch * seq, generator=gen)[:n]
        target.view(-1)[pick] = IGNORE
    return {"logits": logits.to(device), "target": target.to(device)}


def reference(logits, target):
    v = logits.shape[-1]
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, v), target.reshape(-1).long(),
                                             ignore_index=IGNORE, reduction="mean")
    return loss.reshape(1)


FUZZ = {"seq": (1, 64), "batch": (1, 4), "vocab": (2, 3000), "ignored": (0, 16)}
