"""TL101: a load or store of block offsets with no mask on one of their axes."""

from __future__ import annotations

from harness.lint.registry import HIGH, rule
from harness.lint.rules._twins import unmasked_tiles

BAD = '''
import triton
import triton.language as tl

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x + tl.load(y_ptr + offs))

def add(x, y, out):
    add_kernel[(triton.cdiv(out.numel(), 1024),)](x, y, out, out.numel(), BLOCK=1024)
'''

GOOD = '''
import triton
import triton.language as tl

@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)

def add(x, y, out):
    add_kernel[(triton.cdiv(out.numel(), 1024),)](x, y, out, out.numel(), BLOCK=1024)
'''


@rule("TL101", "unmasked-tile-access", cases=("add-missing-mask", "matmul-k-tail", "attention-seq-tail",
                                               "conv2d-channel-mask"),
      confidence=HIGH, bad=BAD, good=GOOD,
      summary="tl.load/tl.store of offsets that walk a tensor block by block (pid * BLOCK + tl.arange(0, BLOCK), "
              "or a loop that steps by BLOCK) with no mask on that axis")
def check(module):
    """The last block of a size that is not a multiple of BLOCK holds lanes past the end: without a mask
    they read and write neighbouring memory. Fires only with strong evidence in the file that the last
    block can be partial: a launch whose grid rounds up (``cdiv``) on that axis, or a loop that steps the
    access up to a runtime bound (TL106, preview, fires on weaker evidence); a kernel that never
    masks an axis it is launched on exactly (a fixed head dimension, a packed format) is left alone, and
    so is a load or store of a buffer the launcher allocates in whole blocks: padded (``torch.empty((M_padded,
    ...))``, ``cdiv(n, B) * B``), or a product with the block the launch passes as a factor
    (``torch.empty(rows * n_split * block)`` with ``BLOCK=block``; for a block of rows, ``lanes[:, None] * D``,
    the row's length ``D`` a factor too). Quiet when the axis is masked (by any comparison of its
    offsets), when the file tests that a size is a multiple of the block (``assert M % BLOCK_M == 0``, or
    ``K % 128 == 0`` in the function that picks the kernel, 128 being the block the launch passes), when
    every launch passes the block size as the tensor's own size (``D=x.shape[1]``) or every autotune config
    fixes it to 1, when the grid cuts a literal extent into blocks that divide it (``cdiv(512, bd)`` with
    ``bd`` 64 or 512, or ``meta["BLOCK"]`` whose literal configs all divide it), when the loop walks whole
    blocks only, its tail peeled off (``range(N % B, N, B)``, ``range(0, N // B * B, B)``) or its bound passed by
    every launch as a product with the block as a factor (``K = n_groups * GROUP`` with ``BLOCK_K=GROUP``; a size
    only checked by ``K // GROUP`` is no multiple), wrapped with ``%``
    (the matmul tutorial's rows), clamped into the buffer (``tl.minimum(offs, n - 1)``, ``tl.clamp(offs, 0, n - 1)``,
    ``tl.where(offs < n, offs, n - 1)``: a padding lane re-reads the last element), or under an ``if`` (an
    EVEN_K-style guard that lint cannot read). A kernel that exits when its block starts past a bound
    (``if pid * BLOCK >= n: return``) runs whole blocks of a padded count: TL106."""
    yield from unmasked_tiles(module, "strong")
