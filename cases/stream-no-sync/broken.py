"""A matmul on a side stream, then a Triton ReLU on the current stream that does not wait for it.

Streams let independent work overlap: here the matmul goes to a side stream (in a
real model, to overlap with communication or with another branch), and the ReLU
epilogue, a Triton kernel, is launched as usual. A Triton launch goes to the
*current* stream (``torch.cuda.current_stream()``), and two streams are ordered only
where the program says so. The launcher orders the side stream after the current
one (the inputs are ready before the matmul starts) but not the other way round:
nothing makes the current stream wait for the matmul.

So the ReLU can start a few microseconds after the matmul was queued, while the
matmul is still running: it reads tiles of ``out`` the matmul has not written yet,
"rectifies" whatever was there, and the matmul's tiles then land on top,
unrectified. How much of the output that spoils depends on timing: on how far the
matmul has got when the ReLU reaches each tile. The first call in a process is
usually right, because Triton compiles the kernel (or loads it from its cache)
before that first launch, which takes longer than the matmul; the calls after it
are not. PyTorch cannot help: its caching allocator tracks which stream
*allocated* a tensor, not which streams read it, and nothing checks that a kernel's
inputs are complete. The interpreter has no streams.

The same race, with the roles swapped, was a compiler bug in PyTorch Inductor:
Triton kernels generated inside a user's stream context were launched on the
default stream, racing with the matmuls that produced their inputs on the user's
stream (pytorch/pytorch#178547).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def relu_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, tl.maximum(x, 0.0), mask=mask)


def matmul_relu(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())  # a, b and out are ready before the matmul starts
    with torch.cuda.stream(side):
        torch.matmul(a, b, out=out)  # on the side stream, to overlap with other work
    n = out.numel()
    relu_kernel[(triton.cdiv(n, 1024),)](out, n, BLOCK=1024)  # BUG: on the current stream, which has not waited for the matmul
    return out
