"""Scatter with duplicate indices inside one program, made order-independent with atomic_max.

"The last occurrence" is "the largest position", and ``max`` does not care in which
order the stores arrive: ``tl.atomic_max`` leaves the largest position at
``last[id]`` whatever the lanes, warps and instructions do. The ids that do not occur
keep the ``-1`` the launcher wrote, which every position beats.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def last_positions_kernel(ids_ptr, last_ptr, seq_len, vocab, stride_ids, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    pos = tl.arange(0, BLOCK)
    mask = pos < seq_len
    ids = tl.load(ids_ptr + row * stride_ids + pos, mask=mask, other=0)
    tl.atomic_max(last_ptr + row * vocab + ids, pos, mask=mask)  # FIX: the largest position wins, in any order


def last_positions(ids: torch.Tensor, last: torch.Tensor) -> torch.Tensor:
    rows, seq_len = ids.shape
    vocab = last.shape[1]
    assert last.stride(0) == vocab and last.stride(1) == 1
    last.fill_(-1)  # ids that do not occur
    last_positions_kernel[(rows,)](ids, last, seq_len, vocab, ids.stride(0), BLOCK=triton.next_power_of_2(seq_len))
    return last


if __name__ == "__main__":  # python cases/<slug>/<this file>: the kernel beside the reference
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, where harness/ is
    from harness.run.standalone import main

    sys.exit(main(__file__))
