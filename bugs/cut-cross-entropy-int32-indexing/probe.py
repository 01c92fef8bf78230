"""A reproduction of Cut Cross-Entropy's log-sum-exp forward (cut_cross_entropy/cce_lse_forward.py,
_cce_lse_forward_kernel, cut-cross-entropy 25.1.1 on PyPI; the fix: 64-bit indexing,
https://github.com/apple/ml-cross-entropy/pull/39): our own kernel with the released one's launch
and indexing. One program per (block of tokens, block of the vocabulary), ordered in groups of
GROUP_B token blocks as the released kernel orders them; token and vocabulary offsets wrap with
``% B`` and ``% V`` as there; the logits tile e @ c.T is accumulated in fp32 over blocks of the
hidden dimension, its row-wise log-sum-exp merged into the output under a spin lock
(logaddexp). Buggy: the row offsets ``offs_v * stride_cv`` and ``offs_b * stride_eb`` in int32,
as released, which wrap once the classifier (vocabulary x hidden) or the embeddings pass 2**31
elements; fixed: the offsets in int64 (PR 39's ``.to(tl.int64)``). Block sizes: the released
forward's default configuration (BLOCK_B = 256, BLOCK_V = 128, BLOCK_D = 32).
"""

import torch
import triton
import triton.language as tl

BLOCK_B, BLOCK_V, BLOCK_D, GROUP_B = 256, 128, 32, 8  # _cce_forward_best_config in 25.1.1's tl_autotune.py


@triton.jit
def _logaddexp(a, b):
    mn = tl.minimum(a, b)
    mx = tl.maximum(a, b)
    return tl.log(1.0 + tl.exp(mn - mx)) + mx


@triton.jit
def _cce_lse_forward(E, C, LSE, Locks, B, V, D, stride_eb, stride_cv, num_locks, WIDE: tl.constexpr,
                     BLOCK_B: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_D: tl.constexpr, GROUP_B: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_b = tl.cdiv(B, BLOCK_B)
    num_pid_v = tl.cdiv(V, BLOCK_V)
    num_pid_in_group = GROUP_B * num_pid_v
    group_id = pid // num_pid_in_group
    first_pid_b = group_id * GROUP_B
    group_size_b = min(num_pid_b - first_pid_b, GROUP_B)
    pid_b = first_pid_b + ((pid % num_pid_in_group) % group_size_b)
    pid_v = (pid % num_pid_in_group) // group_size_b
    offs_b = (pid_b * BLOCK_B + tl.arange(0, BLOCK_B)) % B
    offs_v = (pid_v * BLOCK_V + tl.arange(0, BLOCK_V)) % V
    offs_d = tl.arange(0, BLOCK_D)
    if WIDE:  # the fix: 64-bit row offsets
        offs_b = offs_b.to(tl.int64)
        offs_v = offs_v.to(tl.int64)
    e_ptrs = E + (offs_b[:, None] * stride_eb + offs_d[None, :])
    c_ptrs = C + (offs_v[None, :] * stride_cv + offs_d[:, None])  # BUG: int32 products unless WIDE
    accum = tl.zeros((BLOCK_B, BLOCK_V), dtype=tl.float32)
    for d in range(0, tl.cdiv(D, BLOCK_D)):
        e = tl.load(e_ptrs, mask=offs_d[None, :] < D - d * BLOCK_D, other=0.0)
        c = tl.load(c_ptrs, mask=offs_d[:, None] < D - d * BLOCK_D, other=0.0)
        accum = tl.dot(e.to(tl.float32), c.to(tl.float32), accum, input_precision="ieee")
        e_ptrs += BLOCK_D
        c_ptrs += BLOCK_D
    v_mask = (pid_v * BLOCK_V + tl.arange(0, BLOCK_V)) < V
    logits = tl.where(v_mask[None, :], accum, -float("inf"))
    off_b = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    o_mask = off_b < B
    this_mx = tl.max(logits, axis=1)
    this_lse = this_mx + tl.log(tl.sum(tl.exp(logits - this_mx[:, None]), axis=1))
    lock = Locks + (pid_b // tl.cdiv(B, BLOCK_B * num_locks))
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    lse = tl.load(LSE + off_b, mask=o_mask, other=0.0)
    tl.store(LSE + off_b, _logaddexp(lse, this_lse), mask=o_mask)
    tl.atomic_xchg(lock, 0)


def _launch(e, c, wide):
    B, D = e.shape
    V = c.shape[0]
    lse = torch.full((B,), -float("inf"), dtype=torch.float32, device=e.device)
    locks = torch.zeros(triton.cdiv(B, 128), dtype=torch.int32, device=e.device)
    grid = (triton.cdiv(B, BLOCK_B) * triton.cdiv(V, BLOCK_V),)
    _cce_lse_forward[grid](e, c, lse, locks, B, V, D, e.stride(0), c.stride(0), locks.numel(), WIDE=wide,
                           BLOCK_B=BLOCK_B, BLOCK_V=BLOCK_V, BLOCK_D=BLOCK_D, GROUP_B=GROUP_B)
    return lse


def launch_buggy(e, c):
    return _launch(e, c, False)


def launch_fixed(e, c):
    return _launch(e, c, True)


def make_inputs(*, device, gen, tokens=256, vocab=512, hidden=128):
    """As upstream's tests/test_cce_lse.py makes them: bf16 e ~ N(0, 1/hidden), c ~ N(0, 1). At the
    trigger's sizes (a classifier of more than 2**31 elements) c is made on the device in slices."""
    e = (torch.randn(tokens, hidden, generator=gen) / hidden ** 0.5).to(torch.bfloat16).to(device)
    c = torch.empty(vocab, hidden, dtype=torch.bfloat16, device=device)
    step = max(1, (1 << 24) // max(1, hidden))
    for at in range(0, vocab, step):
        rows = min(step, vocab - at)
        c[at:at + rows] = torch.randn(rows, hidden, generator=gen).to(torch.bfloat16).to(device)
    return {"e": e, "c": c}


def reference(e, c):
    """logsumexp(e @ c.T) over the vocabulary, in float64, a slice of the vocabulary at a time."""
    e = e.double().cpu()
    out = torch.full((e.shape[0],), -float("inf"), dtype=torch.float64)
    step = max(1, (1 << 24) // max(1, c.shape[1]))
    for at in range(0, c.shape[0], step):
        out = torch.logaddexp(out, torch.logsumexp(e @ c[at:at + step].double().cpu().T, dim=1))
    return out


FUZZ = {"tokens": (255, 256), "vocab": (507, 512), "hidden": (123, 128)}
