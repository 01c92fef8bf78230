"""A reproduction of trident's Triton argmax (kakaobrain/trident: trident/kernel/argmax.py, the kernel
Argmax.forward, and trident/operation/argmax.py, its launcher behind trident.function.argmax(input, dim)): our own
kernel and launcher with the same mechanism, launch pattern and arguments.

The launcher takes a 2-d input and the dim to reduce: the reduced dim's length and stride are x_size and
x_stride, the other's y_size and y_stride (as trident's util.size_and_stride gives them for dim 0 and dim 1). It
allocates an int64 output of y_size indices and launches one program per output index with
X_BLOCK = triton.next_power_of_2(x_size). Each program builds a (1, X_BLOCK) block pointer over the (y_size,
x_size) view at its row, loads the block, takes tl.argmax along it and stores the index as int64.

Buggy, as at the fix's parent: the block is loaded with boundary_check on both dims and padding_option='zero',
and the argmax runs over all X_BLOCK lanes, so the X_BLOCK - x_size padding lanes (x_size not a power of two)
compete with the value 0.0: a row whose values are all negative returns an index >= x_size. Fixed, as commit
a70a73e: where x_size % X_BLOCK != 0 (a triton.heuristics switch, REQUIRE_X_BOUNDARY_CHECK) the block is loaded
with the x boundary check and the lanes at x_size and past are set to -inf before the argmax; otherwise it is
loaded whole with no check. The two sides differ only there (# BUG: / # FIX:).
"""

import torch
import triton
import triton.language as tl


@triton.heuristics({"REQUIRE_X_BOUNDARY_CHECK": lambda args: args["x_size"] % args["X_BLOCK"] != 0})
@triton.jit
def _argmax_rows_kernel(out_ptr, in_ptr, y_size, x_size, y_stride, x_stride,
                        X_BLOCK: tl.constexpr, PAD_WITH_NEG_INF: tl.constexpr,
                        REQUIRE_X_BOUNDARY_CHECK: tl.constexpr):
    row = tl.program_id(0)
    block = tl.make_block_ptr(in_ptr, shape=(y_size, x_size), strides=(y_stride, x_stride),
                              offsets=(row, 0), block_shape=(1, X_BLOCK), order=(1, 0))
    if PAD_WITH_NEG_INF:
        # FIX: the lanes past the row are -inf, so no padding lane can be the maximum
        if REQUIRE_X_BOUNDARY_CHECK:
            vals = tl.load(block, boundary_check=(1,))
            vals = tl.where(tl.arange(0, X_BLOCK)[None, :] < x_size, vals, float("-inf"))
        else:
            vals = tl.load(block)
    else:
        # BUG: the lanes past the row read 0.0 and take part in the argmax
        vals = tl.load(block, boundary_check=(1, 0), padding_option="zero")
    idx = tl.argmax(vals, 1)
    out = tl.make_block_ptr(out_ptr, shape=(y_size,), strides=(1,), offsets=(row,), block_shape=(1,), order=(0,))
    tl.store(out, idx.to(tl.int64))


def _argmax(x, dim, fixed):
    if dim == 0:
        x_size, y_size = x.shape
        y_stride, x_stride = x.stride(1), x.stride(0)
    else:
        y_size, x_size = x.shape
        y_stride, x_stride = x.stride(0), x.stride(1)
    out = torch.empty(y_size, device=x.device, dtype=torch.int64)
    _argmax_rows_kernel[(y_size,)](out, x, y_size, x_size, y_stride, x_stride,
                                   X_BLOCK=triton.next_power_of_2(x_size), PAD_WITH_NEG_INF=fixed)
    return out


def launch_buggy(x, dim):
    return _argmax(x, dim, False)


def launch_fixed(x, dim):
    return _argmax(x, dim, True)


def make_inputs(*, device, gen, rows=4, cols=2000, dim=1, log_probs=0):
    """As the upstream test (tests/test_argmax.py) makes them: x = randn(rows, cols), float32, reduced over `dim`
    (its cases: (4, 2000) over dim 1, (1000, 4) over dim 0). log_probs=1 makes x log_softmax(x) along `dim`, the
    log-probabilities an argmax is often taken over: every value negative."""
    x = torch.randn(rows, cols, generator=gen).to(device)
    if log_probs:
        x = torch.log_softmax(x, dim=dim)
    return {"x": x, "dim": dim}


def reference(x, dim):
    """torch.argmax along dim."""
    return torch.argmax(x, dim=dim)


FUZZ = {"rows": (1, 1000), "cols": (1, 4000), "dim": (0, 1), "log_probs": (0, 1)}
