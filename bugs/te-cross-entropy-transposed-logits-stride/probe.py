"""Glue for TransformerEngine's Triton cross-entropy (transformer_engine/pytorch/triton/cross_entropy.py).

The launcher is cross_entropy_forward(logits, target, label_smoothing, reduce_loss,
dist_process_group, ignore_idx) -> (loss, grad-in-logits); we keep the per-token loss
(reduce_loss=False, no label smoothing, no tensor-parallel group). make_inputs gives the
logits as [batch, seq, vocab]; with seq_major=1 they are the transpose of a contiguous
[seq, batch, vocab] tensor (how Megatron-style models hold activations): unit stride in
the vocabulary, but stride(-2) = batch * vocab. seq_major=0 gives a contiguous tensor,
where both versions agree.
"""

import torch

from harness.bugs.source import load

IGNORE = -100


def _launch(variant, logits, target):
    mod = load(__file__, variant)
    loss, _ = mod.cross_entropy_forward(logits, target, 0.0, False, None, IGNORE)
    return loss


def launch_buggy(logits, target):
    return _launch("buggy", logits, target)


def launch_fixed(logits, target):
    return _launch("fixed", logits, target)


def make_inputs(*, device, gen, seq=64, batch=2, vocab=1000, seq_major=0):
    if seq_major:
        logits = (torch.randn(seq, batch, vocab, generator=gen) * 2.0).to(device).transpose(0, 1)
    else:
        logits = (torch.randn(batch, seq, vocab, generator=gen) * 2.0).to(device)
    target = torch.randint(0, vocab, (batch, seq), generator=gen).to(device)
    return {"logits": logits, "target": target}


def reference(logits, target):
    b, s, v = logits.shape
    loss = torch.nn.functional.cross_entropy(logits.reshape(b * s, v), target.reshape(-1).long(),
                                             reduction="none")
    return loss.reshape(b, s)


FUZZ = {"seq": (1, 64), "batch": (1, 4), "vocab": (2, 3000), "seq_major": (0, 1)}
