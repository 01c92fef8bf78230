"""Reproduction (our own code) of TorchInductor's 2-D pointwise tiling before and after
pytorch/torchdynamo#562 (torchinductor/triton_ops/autotune.py, July 2022).

Inductor tiled a 2-D pointwise kernel (here: a transposing copy, what a permute followed
by .contiguous() compiles to) over a grid (cdiv(xnumel, XBLOCK), cdiv(ynumel, YBLOCK)),
autotuning three block shapes, (64, 64), (4, 256) and (256, 4), each first shrunk to the
size hints (the numels rounded up to powers of two) and grown back towards the target
block volume. Nothing looked at the grid that followed: with a wide x (256 columns) and
many rows, the (256, 4) shape gives cdiv(ynumel, 4) programs on grid axis 1, past CUDA's
65,535, and the launch fails. The fix keeps growing a block dimension while
block * max_grid[dim] is still below the size hint of that dimension.
"""

import triton
import triton.language as tl

MAX_GRID = (2**31 - 1, 65535, 65535)  # CUDA's limits on grid axes 0, 1, 2


def _block_shape(size_hints, x, y, fixed):
    """A tile (XBLOCK, YBLOCK) for a 2-D pointwise kernel, after Inductor's heuristic."""
    target = x * y
    if size_hints[0] * size_hints[1] < target:
        target //= 8
    x = min(x, size_hints[0])
    y = min(y, size_hints[1])
    if fixed:
        while x < size_hints[0] and (x * MAX_GRID[0] < size_hints[0] or x * y < target):
            x *= 2
        while y < size_hints[1] and (y * MAX_GRID[1] < size_hints[1] or x * y < target):
            y *= 2
    else:
        while x < size_hints[0] and x * y < target:
            x *= 2
        while y < size_hints[1] and x * y < target:  # BUG: grows y only to reach the block volume, never to keep cdiv(ynumel, y) <= 65535
            y *= 2
    num_warps = triton.next_power_of_2(min(max(x * y // 256, 1), 8))
    return triton.Config({"XBLOCK": x, "YBLOCK": y}, num_warps=num_warps)


def _configs(size_hints, fixed):
    return [_block_shape(size_hints, 64, 64, fixed), _block_shape(size_hints, 4, 256, fixed),
            _block_shape(size_hints, 256, 4, fixed)]


@triton.jit
def _transpose_copy(in_ptr, out_ptr, xnumel, ynumel, XBLOCK: tl.constexpr, YBLOCK: tl.constexpr):
    # in: [ynumel, xnumel] contiguous; out: [xnumel, ynumel] contiguous
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[None, :]
    yindex = tl.program_id(1).to(tl.int64) * YBLOCK + tl.arange(0, YBLOCK)[:, None]
    mask = (xindex < xnumel) & (yindex < ynumel)
    v = tl.load(in_ptr + yindex * xnumel + xindex, mask=mask, other=0.0)
    tl.store(out_ptr + xindex * ynumel + yindex, v, mask=mask)


_KERNELS = {}


def _kernel(size_hints, fixed):
    key = (size_hints, fixed)
    if key not in _KERNELS:  # Inductor generated one autotuned kernel per size hint
        _KERNELS[key] = triton.autotune(configs=_configs(size_hints, fixed),
                                        key=["xnumel", "ynumel"])(_transpose_copy)
    return _KERNELS[key]


def transpose_copy(a, out, fixed):
    ynumel, xnumel = a.shape
    if a.numel() == 0:  # Inductor launches nothing for an empty tensor
        return out
    size_hints = (triton.next_power_of_2(xnumel), triton.next_power_of_2(ynumel))
    kernel = _kernel(size_hints, fixed)

    def grid(meta):
        return (triton.cdiv(xnumel, meta["XBLOCK"]), triton.cdiv(ynumel, meta["YBLOCK"]))

    kernel[grid](a, out, xnumel, ynumel)
    return out
