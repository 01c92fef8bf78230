"""Inputs and reference for matmul-k-tail: c = a @ b in fp16 with fp32 accumulation.

K is not a multiple of BLOCK_K. a and b sit inside NaN padding and c inside canary
padding. The K tail of a (K, N) matrix runs up to BLOCK_K - 1 whole rows past its
end, more than the default padding when N is large, so b is padded by
``TAIL_ROWS`` rows: every read the broken kernel makes past b lands in NaN, on a
GPU as under the interpreter, instead of in some other allocation.
"""

import torch

from harness.buffers import DEFAULT_PAD, guarded, output

TAIL_ROWS = 128  # more rows than any BLOCK_K a launcher uses


def make_inputs(*, device, gen, m, n, k):
    a = torch.randn(m, k, generator=gen).to(torch.float16)
    b = torch.randn(k, n, generator=gen).to(torch.float16)
    return {
        "a": guarded(a, device),
        "b": guarded(b, device, pad=max(DEFAULT_PAD, TAIL_ROWS * n)),
        "c": output((m, n), torch.float16, device),
    }


def reference(a, b):
    return a.double() @ b.double()


def torch_equivalent(a, b, c):
    return torch.matmul(a, b, out=c)


def bench_work(a, b):
    (m, k), n = a.shape, b.shape[1]
    return 2 * m * n * k  # floating-point operations
