"""Inputs and reference for rng-offset-overflow: seeded dropout of one chunk of a long sequence.

The launcher applies dropout to a chunk of ``rows`` rows that starts at row
``row_start`` of a much longer (virtual) sequence, and draws element ``(r, c)``'s
number from Philox counter ``(row_start + r) * cols + c``: its index in the whole
sequence, so that processing the sequence chunk by chunk gives the same mask as
processing it in one piece. The chunk itself is small; only its counters are large.

The chunk straddles counter 2**32: ``row_start`` is chosen so that its first half
sits below it and its second half above it (on the GPU 128 rows of 8,192 columns
starting at row 524,224, where row 524,288 starts at counter 2**32; under the
interpreter 8 rows of 1,024 columns starting at row 4,194,300).

The reference recomputes ``tl.rand(seed, counter)`` on the host, bit for bit: Philox
4x32 with 10 rounds as ``triton/language/random.py`` defines it, whose counter is
``(offset mod 2**32, offset >> 32, 0, 0)`` for an int64 offset and whose key is
``(seed mod 2**32, seed >> 32)``; the first output becomes a float in [0, 1) as
``uint_to_uniform_float`` does. (The same computation as dropout-repeated-mask's
reference, with the high counter word filled in.) p = 0.25 makes ``1 - p`` exact.
"""

import numpy as np
import torch

from harness.buffers import guarded, output

P = 0.25


def make_inputs(*, device, gen, rows, cols, row_start):
    return {
        "x": guarded(torch.randn(rows, cols, generator=gen), device),
        "p": P,
        "seed": int(torch.randint(0, 2**31 - 1, (1,), generator=gen)),
        "row_start": row_start,
        "out": output((rows, cols), torch.float32, device),
    }


def philox_rand(seed: int, counters: np.ndarray) -> np.ndarray:
    """``tl.rand(seed, counters)`` for int64 counters, computed with NumPy."""
    m32 = np.uint64(0xFFFFFFFF)
    c0 = counters.astype(np.uint64) & m32
    c1 = (counters.astype(np.uint64) >> np.uint64(32)) & m32
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


def reference(x, p, seed, row_start):
    rows, cols = x.shape
    counters = (row_start + np.arange(rows, dtype=np.int64))[:, None] * cols + np.arange(cols, dtype=np.int64)
    keep = philox_rand(seed, counters) > np.float32(p)
    return torch.where(torch.from_numpy(keep), x.double().cpu() / (1 - p), 0.0)
