"""A tiled transpose under ``@triton.autotune`` whose grid is wrong for one config: the tuning runs hide it.

Each program copies a ``BLOCK_M x BLOCK_N`` tile of ``x`` (M x N) into ``out`` (N x M),
transposed. The grid is a lambda of the meta-parameters, as it should be, but its
second dimension was copy-pasted from the first and divides ``N`` by ``BLOCK_M``.
For a square tile that is the same number. For the 128 x 32 config it launches a
quarter of the column tiles, so only the first quarter of ``out``'s rows is written.

The 128 x 32 config launches a quarter of the programs and moves a quarter of the
bytes, so it is also the fastest, and the autotuner picks it. But on the first call
for a shape, the autotuner first times *both* configs on the caller's arguments,
and the 64 x 64 config's runs write all of ``out``. The first call returns a complete
and correct transpose; a test that calls the kernel once and compares passes. The
second call finds the tuned config in the cache, launches it once into a fresh
``out``, and three quarters of the result stay zero.
"""

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 32}, num_warps=4),
    ],
    key=["M", "N"],
)
@triton.jit
def transpose_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_om,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :], mask=mask)
    tl.store(out_ptr + rn[:, None] * stride_om + rm[None, :], tl.trans(tile), mask=tl.trans(mask))


def transpose(x: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    assert x.stride(1) == 1
    out = torch.zeros((N, M), device=x.device, dtype=x.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_M"]))  # BUG: BLOCK_M where BLOCK_N was meant
    transpose_kernel[grid](x, out, M, N, x.stride(0), out.stride(0))
    return out


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
