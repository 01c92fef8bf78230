"""Inputs and reference for int32-pid-stride-overflow: int8 quantisation scales of q, a view into a fused QKV buffer.

A fused QKV projection writes one ``(rows, 3 * heads * 128)`` fp16 buffer; ``q`` is
the first third of each row, a ``(rows, heads, 128)`` view with row stride
``3 * heads * 128``. The launcher computes SageAttention-style per-block scales:
``max |q|`` over each block of 128 rows of each head, divided by 127.

On the GPU: 100,000 rows, 56 heads (as in SageAttention #386): ``q`` has 716.8 M
elements, far below 2**31, but its row stride is 21,504, so its rows span
2,150,400,000 elements of the buffer, just past 2**31 (the buffer is 4.3 GB of
fp16). To keep building it cheap, k and v are zeros and each row of q is one shared
row of noise times a per-row factor (drawn with ``gen``), so the maxima differ from
block to block. The reference is exact: a max of fp16 values, then one division.
"""

import torch

from harness.buffers import guarded, output

D = 128  # head dimension
BLOCK_N = 128  # rows per scale block


def make_inputs(*, device, gen, rows, heads):
    width = heads * D
    noise = torch.randn(1, width, generator=gen)
    factor = torch.rand(rows, 1, generator=gen) + 0.5
    qkv = torch.zeros(rows, 3 * width, dtype=torch.float16)
    qkv[:, :width] = (factor * noise).half()  # q; k and v stay zero
    qkv = guarded(qkv, device)
    n_blocks = -(-rows // BLOCK_N)
    return {
        "q": qkv[:, :width].view(rows, heads, D),  # strides (3 * heads * D, D, 1)
        "scale": output((heads, n_blocks), torch.float32, device),
    }


def reference(q):
    rows, heads, _ = q.shape
    n_blocks = -(-rows // BLOCK_N)
    a = torch.zeros(n_blocks * BLOCK_N, heads, D, dtype=q.dtype, device=q.device)
    a[:rows] = q.abs()
    return (a.view(n_blocks, BLOCK_N, heads, D).amax(dim=(1, 3)).T.double() / 127.0).cpu()
