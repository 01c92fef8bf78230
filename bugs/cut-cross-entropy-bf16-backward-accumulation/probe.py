"""A reproduction of Cut Cross-Entropy's backward (cut_cross_entropy/cce_backward.py,
_cce_backward_kernel and _mm_backward, cut-cross-entropy 25.1.1 on PyPI;
https://github.com/apple/ml-cross-entropy/issues/14): our own kernel with the released one's
launch and mechanism. One program per (block of tokens, block of the vocabulary): the logits
tile e @ c.T accumulated in fp32 over blocks of the hidden dimension, the softmax gradient
exp(logit - lse) minus the one-hot target, times the loss's gradient, cast to the embeddings'
dtype; then its two products, d @ c for dE and d.T @ e for dC, each added under a spin lock
(atomic_cas, load, add, store, atomic_xchg, as tl_lock_add does) into the gradient buffers.
Buggy: those buffers are bf16 like the inputs (``torch.zeros_like(e)``), so every partial sum
over the other blocks is rounded to bf16 (the released kernel); fixed: fp32 buffers, rounded to
bf16 once at the end (``accum_e_fp32`` / ``accum_c_fp32``, what impl="cce_exact" asks for since
PR 23, on Triton >= 3.2). Block sizes: the released backward's default configuration
(BLOCK_B = BLOCK_V = 128, BLOCK_D = 32). The dots take their bf16 operands converted to fp32
(``input_precision="ieee"``): a product of two bf16 values is exact in fp32, so the tile is the
released kernel's up to the order of its fp32 sums, and Triton 3.7.1's interpreter computes a
bf16 ``tl.dot`` wrongly (its result off by 1e10), which would hide everything else there.
"""

import torch
import triton
import triton.language as tl

BLOCK_B, BLOCK_V, BLOCK_D = 128, 128, 32  # _cce_backward_best_config in 25.1.1's tl_autotune.py


@triton.jit
def _lock_add(ptrs, v, mask, lock):
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    cur = tl.load(ptrs, mask=mask, other=0.0)
    tl.store(ptrs, (v + cur).to(ptrs.dtype.element_ty), mask=mask)
    tl.atomic_xchg(lock, 0)


@triton.jit
def _cce_backward(E, C, LSE, T, dE, dC, dE_lock, dC_lock, grad, B, V, D, stride_eb, stride_cv,
                  BLOCK_B: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    num_v = tl.cdiv(V, BLOCK_V)
    pid_b, pid_v = pid // num_v, pid % num_v
    offs_b = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    offs_v = pid_v * BLOCK_V + tl.arange(0, BLOCK_V)
    offs_d = tl.arange(0, BLOCK_D)
    b_ok, v_ok = offs_b < B, offs_v < V
    accum = tl.zeros((BLOCK_B, BLOCK_V), dtype=tl.float32)
    for d in range(0, tl.cdiv(D, BLOCK_D)):
        d_ok = offs_d + d * BLOCK_D < D
        e = tl.load(E + offs_b[:, None] * stride_eb + (d * BLOCK_D + offs_d)[None, :],
                    mask=b_ok[:, None] & d_ok[None, :], other=0.0)
        c = tl.load(C + offs_v[None, :] * stride_cv + (d * BLOCK_D + offs_d)[:, None],
                    mask=v_ok[None, :] & d_ok[:, None], other=0.0)
        accum = tl.dot(e.to(tl.float32), c.to(tl.float32), accum, input_precision="ieee")
    lse = tl.load(LSE + offs_b, mask=b_ok, other=float("inf"))
    g = tl.exp(accum - lse[:, None])
    target = tl.load(T + offs_b, mask=b_ok, other=-1)
    g = g - tl.where(target[:, None] == offs_v[None, :], 1.0, 0.0)
    g = tl.where(b_ok[:, None] & v_ok[None, :], g, 0.0)
    g = (g * grad).to(E.dtype.element_ty)  # cast to the inputs' dtype, as the released kernel does
    for d in range(0, tl.cdiv(D, BLOCK_D)):
        cols = d * BLOCK_D + offs_d
        d_ok = cols < D
        c = tl.load(C + offs_v[:, None] * stride_cv + cols[None, :], mask=v_ok[:, None] & d_ok[None, :], other=0.0)
        _lock_add(dE + offs_b[:, None] * stride_eb + cols[None, :],
                  tl.dot(g.to(tl.float32), c.to(tl.float32), input_precision="ieee"), b_ok[:, None] & d_ok[None, :],
                  dE_lock + pid_b)
        e = tl.load(E + offs_b[:, None] * stride_eb + cols[None, :], mask=b_ok[:, None] & d_ok[None, :], other=0.0)
        _lock_add(dC + offs_v[:, None] * stride_cv + cols[None, :],
                  tl.dot(tl.trans(g).to(tl.float32), e.to(tl.float32), input_precision="ieee"),
                  v_ok[:, None] & d_ok[None, :], dC_lock + pid_v)


def _launch(e, c, targets, scale, fp32_accum):
    e = e.contiguous()  # as upstream's linear_cross_entropy (cce.py: e = e.contiguous()) before its backward
    B, D = e.shape
    V = c.shape[0]
    lse = torch.logsumexp(e.float() @ c.float().T, dim=1)  # the forward's result (cce_lse_forward)
    acc = torch.float32 if fp32_accum else e.dtype  # BUG: bf16 buffers (torch.zeros_like(e)) unless fixed
    de = torch.zeros(e.shape, dtype=acc, device=e.device)
    dc = torch.zeros(c.shape, dtype=acc, device=e.device)
    assert dc.stride() == c.stride(), "dc must have c's strides"  # as cce_backward.py asserts (dc from zeros_like(c))
    de_lock = torch.zeros(triton.cdiv(B, BLOCK_B), dtype=torch.int32, device=e.device)
    dc_lock = torch.zeros(triton.cdiv(V, BLOCK_V), dtype=torch.int32, device=e.device)
    grid = (triton.cdiv(B, BLOCK_B) * triton.cdiv(V, BLOCK_V),)
    _cce_backward[grid](e, c, lse, targets, de, dc, de_lock, dc_lock, float(scale), B, V, D, e.stride(0), c.stride(0),
                        BLOCK_B=BLOCK_B, BLOCK_V=BLOCK_V, BLOCK_D=BLOCK_D)
    return de.to(e.dtype), dc.to(c.dtype)


def launch_buggy(e, c, targets, scale):
    return _launch(e, c, targets, scale, False)


def launch_fixed(e, c, targets, scale):
    return _launch(e, c, targets, scale, True)


def make_inputs(*, device, gen, tokens=256, vocab=512, hidden=128, summed=0):
    """As upstream's tests/test_cce_loss_backward.py makes them: bf16 e ~ N(0, 1/hidden), c ~ N(0, 1)
    with its first rows copied from e (logits that are not all small), random targets; the loss is
    the mean over tokens (its gradient 1/tokens), or with ``summed`` the sum
    (linear_cross_entropy(reduction="sum"): a gradient of 1 per token)."""
    e = torch.randn(tokens, hidden, generator=gen) / hidden ** 0.5
    c = torch.randn(vocab, hidden, generator=gen)
    k = min(tokens, vocab) // 2
    c[:k] = e[:k]
    t = torch.randint(0, vocab, (tokens,), generator=gen)
    return {"e": e.to(torch.bfloat16).to(device), "c": c.to(torch.bfloat16).to(device), "targets": t.to(device),
            "scale": 1.0 if summed else 1.0 / tokens}


def reference(e, c, targets, scale):
    e, c = e.double(), c.double()
    p = torch.softmax(e @ c.T, dim=1)
    p[torch.arange(len(targets)), targets.long()] -= 1.0
    g = p * scale
    return g @ c, g.T @ e


FUZZ = {"tokens": (252, 256), "vocab": (507, 512), "hidden": (123, 128)}
