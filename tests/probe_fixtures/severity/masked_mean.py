"""A row mean whose masked lanes have no other= (undefined in Triton, 0 on today's GPUs, poison
under the probe's interpreter, where they reach the sum). ``launch`` divides by the row's length:
right with 0 in those lanes, a warning (P203), no error. ``launch_block_divisor`` divides by the
block instead: wrong with 0 too wherever the row is not a power of 2 (the defaults, 64 columns,
are one: only shape fuzzing sees it), and shape fuzzing must report it as a GPU shows it (a mean
scaled by cols / BLOCK), not as the poison's NaN."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_mean_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr, BY_BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)  # no other=: undefined in masked lanes
    total = tl.sum(x, axis=0)
    if BY_BLOCK:
        tl.store(out_ptr + row, total / BLOCK)
    else:
        tl.store(out_ptr + row, total / n_cols)


def _launch(x, by_block):
    out = torch.empty(x.shape[0], device=x.device, dtype=x.dtype)
    row_mean_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]),
                                   BY_BLOCK=by_block)
    return out


def launch(x):
    return _launch(x, False)


def launch_block_divisor(x):
    return _launch(x, True)


def make_inputs(*, device, gen, rows=4, cols=64):
    return {"x": torch.randn(rows, cols, generator=gen).to(device)}


def reference(x):
    return x.double().mean(dim=1)


FUZZ = {"cols": (1, 130)}
