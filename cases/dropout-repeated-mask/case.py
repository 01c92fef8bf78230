"""Inputs and reference for dropout-repeated-mask: seeded dropout of an fp32 vector.

A dropout's output is random, so what can a reference check? Seeded dropout
promises more than a drop rate: element ``i`` is kept exactly when
``tl.rand(seed, i) > p``, the uniform number Triton's Philox generator gives for
counter ``i`` under key ``seed``. That stream is a fixed function of ``(seed, i)``,
so the reference recomputes it here on the host, with NumPy, bit for bit: Philox
4x32 with 10 rounds, exactly as ``triton/language/random.py`` defines ``rand`` (the
counter is ``(i, 0, 0, 0)``, the key ``(seed mod 2**32, seed >> 32)``; the first
32-bit output becomes a float in [0, 1) as ``uint_to_uniform_float`` does). It
needs no GPU and no interpreter, and the comparison is elementwise.

So the check is the seeded-dropout contract, not a statistical test: the broken
kernel, whose blocks all reuse counters 0..1023, keeps a different set of elements
in every block but the first, and fails. Any dropout that honours the contract
passes. (A contract-free check also catches this bug: the mask of block 0 equals
the mask of block 1; the write-up shows that test.)

p = 0.25 makes ``1 - p`` exact in fp32, so kept elements are ``x / 0.75`` to within
fp32 rounding: rtol = 1e-6.
"""

import numpy as np
import torch

from harness.buffers import guarded, output

P = 0.25


def make_inputs(*, device, gen, n):
    return {
        "x": guarded(torch.randn(n, generator=gen), device),
        "p": P,
        "seed": int(torch.randint(0, 2**31 - 1, (1,), generator=gen)),
        "out": output((n,), torch.float32, device),
    }


def philox_rand(seed: int, offsets: np.ndarray) -> np.ndarray:
    """``tl.rand(seed, offsets)`` for int32 offsets, computed with NumPy."""
    m32 = np.uint64(0xFFFFFFFF)
    c0 = offsets.astype(np.uint64) & m32
    c1 = np.zeros_like(c0)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0 = np.uint64(seed & 0xFFFFFFFF)
    k1 = np.uint64((seed >> 32) & 0xFFFFFFFF)
    round_a, round_b = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
    key_a, key_b = np.uint64(0x9E3779B9), np.uint64(0xBB67AE85)
    for _ in range(10):
        prod_b = round_b * c2  # both factors < 2**32: the product fits in 64 bits
        prod_a = round_a * c0
        c0, c1, c2, c3 = ((prod_b >> np.uint64(32)) ^ c1 ^ k0, prod_b & m32,
                          (prod_a >> np.uint64(32)) ^ c3 ^ k1, prod_a & m32)
        k0 = (k0 + key_a) & m32
        k1 = (k1 + key_b) & m32
    r = c0.astype(np.uint32).view(np.int32)
    r = np.where(r < 0, ~r, r)  # -r - 1 without overflow
    return r.astype(np.float32) * np.float32(4.6566127342e-10)


def reference(x, p, seed):
    keep = philox_rand(seed, np.arange(x.numel(), dtype=np.int64)) > np.float32(p)
    return torch.where(torch.from_numpy(keep), x.double().cpu() / (1 - p), 0.0)


def torch_equivalent(x, p):
    return torch.nn.functional.dropout(x, p, training=True)


def bench_work(x):
    return 2 * x.numel() * x.element_size()  # read x, write out
