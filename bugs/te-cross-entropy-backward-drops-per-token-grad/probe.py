"""Glue for TransformerEngine's Triton cross-entropy backward (transformer_engine/pytorch/triton/cross_entropy.py).

The project's two launchers, as its autograd function calls them: cross_entropy_forward(
logits, target, label_smoothing=0, reduce_loss=False, dist_process_group=None, ignore_idx)
computes the per-token loss and leaves the softmax gradient in (a copy of) the logits;
cross_entropy_backward(that buffer, grad_output) scales it by the upstream gradient of each
token. The result is d(sum(grad_output * loss)) / d(logits). make_inputs' weighted=1 gives
a different upstream gradient per token (a loss weight); weighted=0 gives every token the
same one, where the buggy and fixed versions agree.
"""

import torch

from harness.bugs.source import load

IGNORE = -100


def _launch(variant, logits, target, grad_output):
    mod = load(__file__, variant)
    _, grad = mod.cross_entropy_forward(logits.clone(), target, 0.0, False, None, IGNORE)
    return mod.cross_entropy_backward(grad, grad_output)


def launch_buggy(logits, target, grad_output):
    return _launch("buggy", logits, target, grad_output)


def launch_fixed(logits, target, grad_output):
    return _launch("fixed", logits, target, grad_output)


def make_inputs(*, device, gen, seq=64, batch=2, vocab=1000, weighted=0):
    logits = torch.randn(batch, seq, vocab, generator=gen) * 2.0
    target = torch.randint(0, vocab, (batch, seq), generator=gen)
    if weighted:
        grad_output = torch.rand(batch, seq, generator=gen) + 0.1
    else:
        grad_output = torch.full((batch, seq), 0.5)
    return {"logits": logits.to(device), "target": target.to(device), "grad_output": grad_output.to(device)}


def reference(logits, target, grad_output):
    p = torch.softmax(logits, dim=-1)
    onehot = torch.nn.functional.one_hot(target.long(), logits.shape[-1]).to(p.dtype)
    return (p - onehot) * grad_output[..., None]


FUZZ = {"seq": (1, 64), "batch": (1, 4), "vocab": (2, 3000), "weighted": (0, 1)}
