"""SwiGLU launched on the current device while its tensors live on another GPU.

The kernel is fine: one program per row, ``silu(a) * b``. The launch is the trap.
``swiglu_kernel[grid](...)`` runs on the *current* CUDA device
(``torch.cuda.current_device()``, 0 unless someone called ``set_device``) and on
that device's current stream; Triton does not look at where the tensors are. When a
model is split over GPUs, layer 20's activations are on ``cuda:1`` while the current
device is still ``cuda:0``.

Before launching, Triton's launcher asks the CUDA driver, for each pointer argument,
through which address the *current* device's context can reach it. Without peer
access between the two GPUs it cannot, and the launch raises ``ValueError: Pointer
argument (at 0) cannot be accessed from Triton (cpu tensor?)`` (the question mark is
Triton's: it guesses a CPU tensor, the usual cause). What a given call does depends
on which CUDA context is current on the thread, which PyTorch sets up lazily: in a
process that has not used ``cuda:0`` at all, the first launch can even run on
``cuda:1`` and be right, and the next one fail. With peer access enabled, the pointer
check can pass, and the kernel then runs on ``cuda:0``'s stream, unordered with the
work queued on ``cuda:1``: still a bug. PyTorch's own operators avoid all of this by
switching to their tensors' device before they launch.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def swiglu_kernel(a_ptr, b_ptr, c_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    a = tl.load(a_ptr + row * n_cols + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(c_ptr + row * n_cols + cols, a * tl.sigmoid(a) * b, mask=mask)


def swiglu(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = a.shape
    swiglu_kernel[(n_rows,)](a, b, c, n_cols, BLOCK=triton.next_power_of_2(n_cols))  # BUG: launches on the current device, not a's
    return c
