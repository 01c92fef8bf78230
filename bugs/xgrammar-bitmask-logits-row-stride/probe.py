"""Glue for xgrammar's Triton token-bitmask kernel (xgrammar/kernels/apply_token_bitmask_inplace_triton.py).

The launcher, apply_token_bitmask_inplace_triton(logits, bitmask), sets to -inf, in place, the logits of every
token whose bit in the request's packed bitmask is 0 (bit j of word w of a row is token 32 * w + j; 1 = allowed),
on a persistent grid of one program per SM. The glue calls it and returns the logits it masked.

make_inputs gives the logits as a view of a float32 buffer whose rows are `pad` columns longer than the
vocabulary (pad=0: a contiguous tensor, where both versions agree), and the bitmask as a contiguous int32
tensor of ceil(vocab / 32) words a row, its bits past the vocabulary set, as xgrammar allocates it.

The launcher asks torch.cuda for the SM count at every call; under the interpreter (no GPU) the question is
answered (132) for the length of the call and the real function put back after it.
"""

import contextlib
import os
import types

import torch

from harness.bugs.source import load

SMS_ON_CPU = 132


@contextlib.contextmanager
def _sm_count_answered():
    if os.environ.get("TRITON_INTERPRET") != "1" or torch.cuda.is_available():
        yield
        return
    keep = torch.cuda.get_device_properties
    torch.cuda.get_device_properties = lambda device=None: types.SimpleNamespace(
        name="interpreter", multi_processor_count=SMS_ON_CPU)
    try:
        yield
    finally:
        torch.cuda.get_device_properties = keep


def _run(variant, logits, bitmask):
    mod = load(__file__, variant)
    with _sm_count_answered():
        mod.apply_token_bitmask_inplace_triton(logits, bitmask)
    return logits


def launch_buggy(logits, bitmask):
    return _run("buggy", logits, bitmask)


def launch_fixed(logits, bitmask):
    return _run("fixed", logits, bitmask)


def _pack(allowed):
    """(rows, vocab) bool -> (rows, ceil(vocab / 32)) int32, bit j of word w = token 32 * w + j; the bits past
    the vocabulary set (allowed), as xgrammar's allocate_token_bitmask fills a fresh bitmask."""
    rows, vocab = allowed.shape
    words = (vocab + 31) // 32
    bits = torch.ones(rows, words * 32, dtype=torch.int64)
    bits[:, :vocab] = allowed.to(torch.int64)
    weights = torch.tensor([1 << j for j in range(32)], dtype=torch.int64)
    packed = (bits.view(rows, words, 32) * weights).sum(-1)
    packed = torch.where(packed >= 1 << 31, packed - (1 << 32), packed)  # as a signed int32
    return packed.to(torch.int32)


def make_inputs(*, device, gen, batch=2, vocab=100, pad=0):
    """As the fix's test test_apply_token_bitmask_inplace_shape_stride_mismatch lays them out: float32 logits
    taken as logits = buffer[:, :vocab] of a (batch, vocab + pad) buffer (the test: 2 rows of 100 tokens,
    pad 1), and an int32 bitmask of ceil(vocab / 32) words a row. The allowed tokens are drawn at random,
    half of them, as test_get_masked_tokens_from_bitmask draws its masks (randint(0, 2) per token); the logits
    are randn, as test_apply_token_bitmask_inplace_kernel_large makes them."""
    buffer = torch.randn(batch, vocab + pad, generator=gen)
    allowed = torch.randint(0, 2, (batch, vocab), generator=gen).bool()
    return {"logits": buffer.to(device)[:, :vocab], "bitmask": _pack(allowed).to(device)}


def reference(logits, bitmask):
    """The logits, -inf where the token's bit is 0."""
    vocab = logits.shape[-1]
    words = bitmask.to(torch.int64) & 0xFFFFFFFF
    shifts = torch.arange(32, device=bitmask.device, dtype=torch.int64)
    bits = ((words[:, :, None] >> shifts) & 1).reshape(bitmask.shape[0], -1)[:, :vocab]
    return torch.where(bits.bool(), logits, torch.full_like(logits, float("-inf")))


FUZZ = {"batch": (1, 64), "vocab": (1, 32011), "pad": (0, 64)}
