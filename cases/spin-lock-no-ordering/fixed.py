"""Suffix sums with a chained scan whose programs only ever wait for programs that have started.

Each program takes its block from a ticket counter (``tl.atomic_add`` on a global
int32, as CUB's decoupled look-back does with its dynamic tile ids) and counts the
blocks from the right: the first program to start takes the last block, the second
the one before it, and so on. A program then waits only for the block of a program
that drew an earlier ticket, so that program is already running, and it waits in
turn only for an earlier one: the chain always makes progress, however many programs
there are and in whatever order the GPU starts them. Under the interpreter, which
runs programs in id order, program 0 draws ticket 0 and takes the last block, whose
carry is ready; every later program finds its carry published.

(``blk = tl.num_programs(0) - 1 - tl.program_id(0)`` also works in practice, but it
relies on the GPU starting programs in increasing id order, which CUDA does not
promise; the ticket does not.)
"""

import torch
import triton
import triton.language as tl


@triton.jit
def suffix_sum_kernel(x_ptr, out_ptr, carry_ptr, ticket_ptr, n, BLOCK: tl.constexpr):  # FIX: a ticket counter
    blk = tl.num_programs(0) - 1 - tl.atomic_add(ticket_ptr, 1)  # FIX: blocks in order of start, right to left
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
    ticket = torch.zeros(1, dtype=torch.int32, device=x.device)  # FIX: the next block to hand out
    suffix_sum_kernel[(n_blocks,)](x, out, carry, ticket, n, BLOCK=1024)  # FIX: pass the ticket
    return out
