"""A launch whose grid is a list, ``kernel[[n_programs]]``, which compiled Triton accepts;
and a row sum that loops ``for start in range(0, n_cols, BLOCK)`` over a runtime bound."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc))


def launch(x):
    out = torch.empty(x.shape[0], device=x.device)
    row_sum_kernel[[x.shape[0]]](x, out, x.shape[1], x.stride(0), BLOCK=32)
    return out


def make_inputs(*, device, gen, rows=4, cols=100):
    return {"x": torch.randn(rows, cols, generator=gen).to(device)}


def reference(x):
    return x.double().sum(dim=1)
