"""Suffix sums with a chained scan whose programs wait for the program *after* them.

A single-pass scan in the style of CUB's decoupled look-back: each program sums its
own block, waits until its neighbour has published the carry (the total of
everything on its side), adds its own total and publishes the result for the next
program in the chain. Each wait is a spin on an atomic with acquire semantics, each
publication an exchange with release semantics, so the carries themselves are
ordered correctly.

For a *suffix* sum the carry flows from right to left: block ``b`` needs the total
of blocks ``b + 1 ... n_blocks - 1``. Taking ``b = tl.program_id(0)``, the natural
choice, makes program 0 wait for program 1, program 1 for program 2, and so on. That
is only safe if program ``b + 1`` is guaranteed to run while program ``b`` spins, and
nothing guarantees it: Triton (and CUDA) promise no order and no co-residency between
the programs of a grid. In practice a GPU starts programs roughly in increasing id
and keeps as many resident as fit (a few thousand on an H100). With ~9,800 programs,
the resident ones all spin waiting for programs that can only start when a resident
one finishes. None ever does: the kernel hangs, and the process with it.

With fewer programs than fit on the GPU at once the same kernel finishes and is
right, which is how it passes every small test. Under ``TRITON_INTERPRET=1`` programs
run one after another in id order, so program 0 spins forever on a carry that
program 1, which never starts, would have published: the interpreter hangs at every
size.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def suffix_sum_kernel(x_ptr, out_ptr, carry_ptr, n, BLOCK: tl.constexpr):
    blk = tl.program_id(0)  # BUG: block blk waits for block blk + 1, a program that may not have started and cannot start
    offs = blk * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    total = tl.sum(x, axis=0)
    local = total - tl.cumsum(x, axis=0) + x  # suffix sums within the block
    # Wait for the carry of the block to the right (-1 until it is published).
    right = tl.atomic_add(carry_ptr + blk + 1, 0, sem="acquire")
    while right < 0:
        right = tl.atomic_add(carry_ptr + blk + 1, 0, sem="acquire")
    tl.atomic_xchg(carry_ptr + blk, right + total, sem="release")  # publish for the block to the left
    tl.store(out_ptr + offs, local + right, mask=offs < n)


def suffix_sum(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    n_blocks = triton.cdiv(n, 1024)
    carry = torch.full((n_blocks + 1,), -1, dtype=torch.int32, device=x.device)
    carry[n_blocks] = 0  # nothing to the right of the last block
    suffix_sum_kernel[(n_blocks,)](x, out, carry, n, BLOCK=1024)
    return out
