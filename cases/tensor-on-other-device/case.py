"""Inputs and reference for tensor-on-other-device: SwiGLU, ``c = silu(a) * b``, of a layer that lives on cuda:1.

With a model split over two GPUs (``device_map="auto"``, pipeline stages), a layer's
activations sit on ``cuda:1`` while the process's current device is still
``cuda:0``, on which the first layers ran. So on the GPU ``make_inputs`` first does a
little work on ``cuda:0`` (as those layers would: it creates ``cuda:0``'s CUDA
context, which PyTorch otherwise creates lazily), then places every tensor on
``cuda:1``; the worker never changes its current device, which stays 0. The case
needs two GPUs (``[run] gpus = 2``). Under the interpreter there is one device, the
CPU, and the case is not run.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, rows, cols):
    dev = device
    if device == "cuda":
        torch.ones(1, device="cuda:0")  # the model's first layers run on cuda:0: its CUDA context is in use
        dev = "cuda:1"  # this layer lives on the second GPU
    return {
        "a": guarded(torch.randn(rows, cols, generator=gen), dev),
        "b": guarded(torch.randn(rows, cols, generator=gen), dev),
        "c": output((rows, cols), torch.float32, dev),
    }


def reference(a, b):
    a, b = a.double(), b.double()
    return a * torch.sigmoid(a) * b
