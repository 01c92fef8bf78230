"""Inputs and reference for splitk-matmul-autotune: C = A @ B, fp16 inputs, fp32 output.

M and N are small and K is large (the shape split-K is for). fp16 inputs keep
``tl.dot`` off TF32 on a GPU, so the GPU and the interpreter compute the same
products (exact in fp32) and differ only in the order of fp32 additions. A and B sit
inside NaN padding, with padding between rows too, so a kernel that ran past a row
or ignored a stride would read NaN.
"""

import torch

from harness.buffers import guarded


def make_inputs(*, device, gen, M, N, K):
    a = torch.randn(M, K, generator=gen).to(torch.float16)
    b = torch.randn(K, N, generator=gen).to(torch.float16)
    return {"a": guarded(a, device, row_pad=64), "b": guarded(b, device, row_pad=64)}


def reference(a, b):
    return a.double() @ b.double()
