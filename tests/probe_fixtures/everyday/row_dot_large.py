"""Row dot products of values of order 30 over 512 columns, in float32, accumulated block
by block: the outputs are of order 10^4. Row 0 holds 0.0123, 10^4 and -10^4 (against weights
of 1): the float32 sum loses the small term's low bits to the large one (0.0127 for 0.0123),
an error of 4e-4 that is float32 rounding at the output's magnitude. Correct: a tolerance
relative to the output's magnitude passes it; a tolerance fixed at 1e-5 does not."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_dot_kernel(x_ptr, w_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        acc += x * tl.load(w_ptr + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc))


def launch(x, w):
    out = torch.empty(x.shape[0], device=x.device)
    row_dot_kernel[(x.shape[0],)](x, w, out, x.shape[1], BLOCK=32)
    return out


def make_inputs(*, device, gen, rows=64, cols=512):
    x = 30 * torch.randn(rows, cols, generator=gen)
    w = 30 * torch.randn(cols, generator=gen)
    if rows >= 2 and cols > 64:  # row 0: 0.0123 + 1e4 - 1e4, the three in one lane of the accumulator
        w[0] = w[32] = w[64] = 1.0
        x[0] = 0.0
        x[0, 0], x[0, 32], x[0, 64] = 0.0123, 1e4, -1e4
    return {"x": x.to(device), "w": w.to(device)}


def reference(x, w):
    return x.double() @ w.double()
