"""A row-wise scale whose row offset is ``row * n_cols`` in int32: right until the tensor
holds more than 2**31 elements, then the offsets wrap (``launch``); ``launch_fixed`` widens
the row index to int64 first. Only ``--large`` on a GPU reaches such sizes."""

import torch
import triton
import triton.language as tl


@triton.jit
def _scale(x_ptr, out_ptr, n_cols, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    if WIDE:
        row = row.to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=m)  # int32 row * n_cols wraps past 2**31
    tl.store(out_ptr + row * n_cols + cols, x * 2.0, mask=m)


def _launch(x, wide):
    rows, cols = x.shape
    out = torch.empty_like(x)
    _scale[(rows,)](x, out, cols, WIDE=wide, BLOCK=triton.next_power_of_2(cols))
    return out


def launch(x):
    return _launch(x, False)


def launch_fixed(x):
    return _launch(x, True)


def make_inputs(*, device, gen, rows=8, cols=1000):
    if device != "cpu" and rows * cols > 1 << 24:  # large sizes: made on the GPU (a CPU randn of 2**31 is slow)
        g = torch.Generator(device=device).manual_seed(int(torch.randint(0, 2**31, (1,), generator=gen)))
        return {"x": torch.randn(rows, cols, generator=g, device=device)}
    return {"x": torch.randn(rows, cols, generator=gen).to(device)}


def reference(x):
    return x.double() * 2.0
