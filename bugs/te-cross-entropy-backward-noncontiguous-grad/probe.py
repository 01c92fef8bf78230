"""Glue for TransformerEngine's Triton cross-entropy backward (transformer_engine/pytorch/triton/cross_entropy.py).

The project's two launchers, as its autograd function calls them: cross_entropy_forward(
logits, target, label_smoothing=0, reduce_loss=False, dist_process_group=None, ignore_idx)
leaves the softmax gradient in (a copy of) the logits; cross_entropy_backward(that buffer,
grad_output) scales row (b, s) by grad_output[b, s]. With seq_major_grad=1, grad_output is
the transpose of a contiguous [seq, batch] tensor (what autograd returns when the loss was
transposed to sequence-major order downstream); seq_major_grad=0 gives a contiguous
[batch, seq] tensor, where the buggy and fixed versions agree.
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


def make_inputs(*, device, gen, seq=64, batch=2, vocab=1000, seq_major_grad=0):
    logits = torch.randn(batch, seq, vocab, generator=gen) * 2.0
    target = torch.randint(0, vocab, (batch, seq), generator=gen)
    if seq_major_grad:
        grad_output = (torch.rand(seq, batch, generator=gen) + 0.1).to(device).t()
    else:
        grad_output = (torch.rand(batch, seq, generator=gen) + 0.1).to(device)
    return {"logits": logits.to(device), "target": target.to(device), "grad_output": grad_output}


def reference(logits, target, grad_output):
    p = torch.softmax(logits, dim=-1)
    onehot = torch.nn.functional.one_hot(target.long(), logits.shape[-1]).to(p.dtype)
    return (p - onehot) * grad_output[..., None]


FUZZ = {"seq": (1, 64), "batch": (1, 4), "vocab": (2, 3000), "seq_major_grad": (0, 1)}
