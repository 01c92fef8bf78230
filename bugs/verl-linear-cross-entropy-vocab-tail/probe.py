"""A reproduction of verl's fused linear cross-entropy forward (verl/utils/kernel/kernels.py,
efficient_entropy_kernel_general_mainloop; https://github.com/volcengine/verl/issues/2899): our own
mainloop with the released tiling (vocabulary in 1024-entry splits, 256 columns at a time, weight
rows past the vocabulary masked to 0, online max / sum of exp / sum of logit * exp per split) and
the epilogue in torch. Buggy: the padded columns' zero logits enter the max and the sums, as
released; fixed: they are set to -inf first (the issue's proposal).
"""

import torch
import triton
import triton.language as tl

VOCAB_PER_SPLIT = 1024
TEMPERATURE = 1.5


@triton.jit
def _entropy_mainloop(hidden, weight, labels, T, V, H, vocab_per_split, rcp_t,
                      out_max, out_accu, out_eb, out_lp,
                      MASK_PAD: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr):
    n_m = tl.cdiv(T, BLOCK_M)
    pid_m = tl.program_id(0) % n_m
    split = tl.program_id(0) // n_m
    n_splits = tl.cdiv(V, vocab_per_split)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rk = tl.arange(0, BLOCK_K)
    lab = tl.load(labels + rm, mask=rm < T, other=-1)
    split_end = tl.minimum((split + 1) * vocab_per_split, V)
    run_max = tl.full((BLOCK_M,), -float("inf"), tl.float32)
    accu = tl.zeros((BLOCK_M,), tl.float32)
    eb = tl.zeros((BLOCK_M,), tl.float32)
    lp = tl.zeros((BLOCK_M,), tl.float32)
    for n in range(0, tl.cdiv(vocab_per_split, BLOCK_N)):
        rn = split * vocab_per_split + n * BLOCK_N + tl.arange(0, BLOCK_N)
        logits = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
        for k in range(0, tl.cdiv(H, BLOCK_K)):
            kk = k * BLOCK_K + rk
            h = tl.load(hidden + rm[:, None] * H + kk[None, :], mask=(rm[:, None] < T) & (kk[None, :] < H), other=0.0)
            w = tl.load(weight + rn[:, None] * H + kk[None, :], mask=(rn[:, None] < split_end) & (kk[None, :] < H),
                        other=0.0)
            logits = tl.dot(h, tl.trans(w), logits, input_precision="ieee")
        logits = logits * rcp_t
        if MASK_PAD:  # the fix; # BUG: without it the zero logits past the split's end enter the sums
            logits = tl.where((rn < split_end)[None, :], logits, -float("inf"))
        old = run_max
        run_max = tl.maximum(old, tl.max(logits, axis=1))
        ex = tl.exp(logits - run_max[:, None])
        coeff = tl.exp(old - run_max)
        accu = coeff * accu + tl.sum(ex, axis=1)
        eb = coeff * eb + tl.sum(tl.where(ex > 0, logits * ex, 0.0), axis=1)
        lp += tl.sum(tl.where(rn[None, :] == lab[:, None], logits, 0.0), axis=1)
    keep = rm < T
    tl.store(out_max + rm * n_splits + split, run_max, mask=keep)
    tl.store(out_accu + rm * n_splits + split, accu, mask=keep)
    tl.store(out_eb + rm * n_splits + split, eb, mask=keep)
    tl.store(out_lp + rm * n_splits + split, lp, mask=keep)


def _launch(hidden, weight, labels, mask_pad):
    T, H = hidden.shape
    V = weight.shape[0]
    splits = triton.cdiv(V, VOCAB_PER_SPLIT)
    parts = [torch.empty(T, splits, dtype=torch.float32, device=hidden.device) for _ in range(4)]
    BM = 128
    grid = (triton.cdiv(T, BM) * splits,)
    _entropy_mainloop[grid](hidden, weight, labels, T, V, H, VOCAB_PER_SPLIT, 1.0 / TEMPERATURE, *parts,
                            MASK_PAD=mask_pad, BLOCK_M=BM, BLOCK_N=256, BLOCK_K=32)
    m, accu, eb, lp = parts
    top = m.max(dim=1).values
    scale = torch.exp(m - top[:, None])
    total = (accu * scale).sum(dim=1)
    lse = top + torch.log(total)
    entropy = lse - (eb * scale).sum(dim=1) / total
    return lp.sum(dim=1) - lse, entropy


def launch_buggy(hidden, weight, labels):
    return _launch(hidden, weight, labels, False)


def launch_fixed(hidden, weight, labels):
    return _launch(hidden, weight, labels, True)


def make_inputs(*, device, gen, tokens=16, hidden=64, vocab=32256):
    h = torch.randn(tokens, hidden, generator=gen) / hidden ** 0.5
    w = torch.randn(vocab, hidden, generator=gen)
    labels = torch.randint(0, vocab, (tokens,), generator=gen)
    return {"hidden": h.to(device), "weight": w.to(device), "labels": labels.to(device)}


def reference(hidden, weight, labels):
    logits = hidden @ weight.t() / TEMPERATURE
    lse = torch.logsumexp(logits, dim=-1)
    logp = logits.gather(1, labels.view(-1, 1)).squeeze(1) - lse
    p = torch.softmax(logits, dim=-1)
    return logp, lse - (p * logits).sum(dim=-1)


FUZZ = {"tokens": (1, 2048), "hidden": (1, 4096), "vocab": (1, 152064)}
