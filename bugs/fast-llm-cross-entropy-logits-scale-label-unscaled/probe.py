"""A reproduction of Fast-LLM's fused Triton cross-entropy from labels (fast_llm/functional/triton/
cross_entropy.py: the kernel triton_cross_entropy_forward_backward_kernel and its launcher
triton_cross_entropy_forward_backward(logits, target, grad_output, logits_scale_factor), which the LM head
reaches through cross_entropy_forward_backward with the triton implementation, the default): our own kernel
and launcher with the same mechanism, launch pattern and arguments.

One program per row (token), grid (n_rows,), the whole row in one block of next_pow2(n_cols) lanes (at most
65536, with 4, 8 or 16 warps as the block grows). Each program loads its row's logits in float32 (lanes past
n_cols as -inf), multiplies them by logits_scale_factor where it is not 1, takes the row's max and the sum of
exp(logit - max), then loads the label's logit and stores the row's loss log(sum) + max - label_logit (0 for a
negative, masked label); the backward half stores grad_losses * (softmax - one_hot(label)) into a gradient the
shape of the logits, grad_losses being grad_output / n_rows (the gradient of the mean the launcher returns).

Buggy, as at the fix's parent (1550bd1): the label's logit is re-read from memory and never scaled, so the loss
subtracts the unscaled label logit from the log-sum-exp of the scaled row, and the scale is applied to the
softmax before the one-hot is taken away, so the gradient is scale * p - 1 at the label instead of
scale * (p - 1). Fixed, as commit 5180937d (PR 229): the label's logit is scaled like the row, and the whole
gradient is multiplied by the scale. The two sides differ only there (a constexpr switch, the lines marked
# BUG:). At logits_scale_factor 1 they agree.

Both sides here read the label's logit only for a label >= 0 (the fixed order): the buggy upstream kernel read it
before testing the label, a read before the row for a masked token that changes no result; the inputs hold no
masked label, as the fix's test holds none."""

import torch
import triton
import triton.language as tl

MAX_BLOCK = 65536  # the launcher's assertion on the row's block (TritonConfig.MAX_BLOCK_SIZE_BYTES)


@triton.jit
def _cross_entropy_rows_kernel(logits_ptr, labels_ptr, grad_ptr, losses_ptr, grad_losses, n_cols,
                               logits_row_stride, grad_row_stride, scale: tl.constexpr,
                               BLOCK: tl.constexpr, SCALE_WHOLE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    in_row = cols < n_cols
    row_logits_ptr = logits_ptr + row * logits_row_stride

    x = tl.load(row_logits_ptr + cols, mask=in_row, other=-float("inf")).to(tl.float32)
    if scale != 1.0:
        x = x * scale
    row_max = tl.max(x, 0)
    e = tl.exp(x - row_max)
    denom = tl.sum(e, 0)

    label = tl.load(labels_ptr + row)
    loss = 0.0
    if label >= 0:
        target_logit = tl.load(row_logits_ptr + label).to(tl.float32)
        if SCALE_WHOLE:  # fixed (5180937d): the label's logit scaled like the rest of the row
            if scale != 1.0:
                target_logit = target_logit * scale
        # BUG: (buggy side) the label's logit is used as loaded, unscaled
        loss = tl.log(denom) + row_max - target_logit
    tl.store(losses_ptr + row, loss)

    g = tl.where(label < 0, 0.0, grad_losses)
    p = e / denom
    if SCALE_WHOLE:  # fixed: (p - one_hot) first, then the whole gradient times the scale
        grad = g * tl.where(cols == label, p - 1.0, p)
        if scale != 1.0:
            grad = grad * scale
    else:  # BUG: the scale multiplies p alone, so the label's lane gets scale * p - 1
        if scale != 1.0:
            p = p * scale
        grad = g * tl.where(cols == label, p - 1.0, p)
    tl.store(grad_ptr + row * grad_row_stride + cols, grad, mask=in_row)


def _launch(logits, target, logits_scale_factor, fixed, grad_output=1.0):
    assert logits.is_contiguous() and target.is_contiguous()
    n_rows, n_cols = logits.shape
    assert target.shape == (n_rows,)
    block = triton.next_power_of_2(n_cols)
    assert block <= MAX_BLOCK
    num_warps = 4 if block < 2048 else (8 if block < 8192 else 16)
    losses = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
    grad_logits = torch.empty_like(logits)
    _cross_entropy_rows_kernel[(n_rows,)](
        logits, target, grad_logits, losses, grad_output / n_rows, n_cols, logits.stride(0),
        grad_logits.stride(0), float(logits_scale_factor), BLOCK=block, SCALE_WHOLE=fixed, num_warps=num_warps)
    return losses.mean(), grad_logits


def _run(fixed, logits, target, logits_scale_factor):
    loss, grad = _launch(logits, target, logits_scale_factor, fixed)
    # one tensor: the mean loss, then the gradient w.r.t. the logits (for grad_output = 1)
    return torch.cat([loss.reshape(1).to(grad.dtype), grad.flatten()])


def launch_buggy(logits, target, logits_scale_factor):
    return _run(False, logits, target, logits_scale_factor)


def launch_fixed(logits, target, logits_scale_factor):
    return _run(True, logits, target, logits_scale_factor)


def make_inputs(*, device, gen, rows=256, cols=5000, logits_scale_factor=1):
    """As the fix's test test_cross_entropy (tests/test_triton_kernels.py) makes them for labels: target =
    randint(0, cols, (rows,)), logits = one_hot(target, cols) + randn(rows, cols) / 3, so the logits sit
    moderately close to the target; rows 256, cols 5000 (its 'not a power of 2' and 'loss scaling' cases).
    float32 logits (the test's are bfloat16; the kernel computes in float32 either way). logits_scale_factor is
    the LM head's muP output scale, passed to the launcher as a float: 1 by default (the config's default), 4 in
    the test's 'loss scaling' case."""
    target = torch.randint(0, cols, (rows,), generator=gen)
    noise = torch.randn(rows, cols, generator=gen) / 3
    logits = torch.nn.functional.one_hot(target, cols).to(torch.float32) + noise
    return {"logits": logits.to(device), "target": target.to(device), "logits_scale_factor": logits_scale_factor}


def reference(logits, target, logits_scale_factor):
    """Cross-entropy of the scaled logits, averaged over the rows, and its gradient w.r.t. the unscaled logits:
    loss = mean(logsumexp(s * x) - s * x[label]); grad = s * (softmax(s * x) - one_hot(label)) / rows."""
    s = float(logits_scale_factor)
    z = logits.double() * s
    rows = z.shape[0]
    loss = (torch.logsumexp(z, -1) - z.gather(1, target.long()[:, None])[:, 0]).mean()
    one_hot = torch.nn.functional.one_hot(target.long(), z.shape[1]).double()
    grad = s * (torch.softmax(z, -1) - one_hot) / rows
    return torch.cat([loss.reshape(1), grad.flatten()])


FUZZ = {"rows": (1, 1024), "cols": (1, 8192), "logits_scale_factor": (1, 8)}
