"""Greedy decoding over log-probabilities with a masked load that gives no ``other=``.

One program per row; the row is the vocabulary, loaded in one block of
``next_power_of_2(vocab)`` lanes, and ``tl.argmax`` picks the most likely token. The
load is masked so that it stays inside the row, and the masked lanes are left without
an ``other=`` value, as if a mask made them drop out of what follows. It does not: the
reduction still sees every lane of the block.

Triton's documentation says what a masked-out lane returns when ``other`` is given, and
nothing about when it is not; kernels that rely on it are relying on the backend. In
practice it is 0: the NVIDIA backend emits a move of 0 before its predicated load, and
the interpreter fills masked lanes with zeros. 0 is the identity of a sum, so the
pattern survives in sum-only kernels. Here the reduction is a max, and every
log-probability is below 0: the padding lane wins, and the "most likely token" is the
first lane past the end of the vocabulary, a token that does not exist.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def greedy_token_kernel(logp_ptr, out_ptr, stride, vocab, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    logp = tl.load(logp_ptr + row * stride + cols, mask=cols < vocab)  # BUG: no other=: masked lanes read 0, which beats every log-probability
    tl.store(out_ptr + row, tl.argmax(logp, axis=0))


def greedy_token(logp: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    n_rows, vocab = logp.shape
    greedy_token_kernel[(n_rows,)](logp, out, logp.stride(0), vocab, BLOCK=triton.next_power_of_2(vocab))
    return out
