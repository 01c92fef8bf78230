"""TL106 (preview): TL101 on weaker evidence that the last block can be partial."""

from __future__ import annotations

from harness.lint.registry import LOW, rule
from harness.lint.rules._twins import unmasked_tiles

BAD = '''
import triton
import triton.language as tl

@triton.jit
def scale_kernel(x_ptr, s_ptr, out_ptr, M, BLOCK_M: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    x = tl.load(x_ptr + rows, mask=rows < M, other=0.0)
    tl.store(out_ptr + rows, x * tl.load(s_ptr + rows), mask=rows < M)
'''

GOOD = BAD.replace("tl.load(s_ptr + rows)", "tl.load(s_ptr + rows, mask=rows < M, other=0.0)")


@rule("TL106", "unmasked-tile-access-weak", cases=("add-missing-mask", "conv2d-channel-mask"), confidence=LOW,
      preview=True, bad=BAD, good=GOOD,
      summary="TL101's unmasked block access where only the kernel itself says the last block can be partial "
              "(it masks the axis elsewhere, or counts its tiles with tl.cdiv)")
def check(module):
    """The same trap as TL101, when the only evidence that the axis can end in a partial block is the kernel's
    own: a mask on the same axis elsewhere (the scales of a matmul loaded unmasked while the data are masked)
    or a ``tl.cdiv(N, BLOCK)`` tile count. Preview: buffers padded to whole blocks (MoE's sorted token ids,
    split-K workspaces) make the unmasked access correct, and lint cannot see the padding."""
    yield from unmasked_tiles(module, "weak")
