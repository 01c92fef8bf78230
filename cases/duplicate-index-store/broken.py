"""Scatter with duplicate indices inside one program: "the last occurrence wins" is not a rule.

Prompt-lookup (n-gram) speculative decoding, repetition penalties and some caches
want, for every token id, the position where it last occurred in a sequence. The
sequential version is a loop ``for pos, tok in enumerate(ids): last[tok] = pos``:
later positions overwrite earlier ones. The kernel below is that loop as one
scatter: each program loads its row of token ids and stores ``pos`` at ``last[id]``.
A row has many more positions than distinct ids, so the same address appears many
times in one ``tl.store``.

Triton does not say which of those stores lands last. Under the interpreter the
lanes of a store are written in index order, so the last occurrence wins and the
result matches the loop exactly. On a GPU the elements of the block are spread
over the registers of many threads in several warps: lanes of one warp that store
to the same address in one instruction leave one unspecified winner, each thread
issues its registers one after another, and the warps are not ordered at all. The
value left at ``last[id]`` is one of the positions of ``id``, but not reliably the
last one.
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
    tl.store(last_ptr + row * vocab + ids, pos, mask=mask)  # BUG: duplicate ids: which lane's store lands last is unspecified


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
