"""SwiGLU launched on the device its tensors live on.

``with torch.cuda.device(a.device):`` makes ``a``'s GPU the current device for the
launch, so Triton compiles for it, launches on it and uses its current stream, then
restores the previous device. It is what PyTorch's own operators do (a device
guard), and what Liger-Kernel and kernels-community added to their launchers. It
costs a device switch per call, a few microseconds of host time. The launcher could
also assert that ``b`` and ``c`` are on ``a``'s device: a kernel cannot read another
GPU's memory without peer access.
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
    with torch.cuda.device(a.device):  # FIX: make a's GPU the current device for the launch
        swiglu_kernel[(n_rows,)](a, b, c, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return c
