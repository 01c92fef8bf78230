"""Glue for sglang's batch-invariant persistent matmul (sglang/srt/batch_invariant_ops/
batch_invariant_ops.py): its own launcher matmul_persistent(a, b, bias=None), which allocates the
output in the inputs' dtype and launches matmul_kernel_persistent on min(NUM_SMS, tiles) programs.
It is what aten::mm runs in sglang's batch-invariant (deterministic inference) mode, and what
sglang's test_batch_invariant_ops.py exercises through torch.mm.

The launcher asks torch.cuda for the device's multiprocessor count (NUM_SMS, the persistent grid's
size). On a machine with no GPU (the interpreter's) the module is handed a view of torch whose
cuda.get_device_properties answers 132 (an H100's or H200's count); on a GPU nothing is changed."""

import types

import torch

from harness.bugs.source import load

_SMS = 132


class _TorchNoGpu:
    """torch, with cuda.get_device_properties(...).multi_processor_count answered."""

    cuda = types.SimpleNamespace(
        get_device_properties=lambda *a, **k: types.SimpleNamespace(multi_processor_count=_SMS))

    def __getattr__(self, name):
        return getattr(torch, name)


def _launch(variant, a, b):
    mod = load(__file__, variant)
    if not torch.cuda.is_available():
        mod.torch = _TorchNoGpu()
    return mod.matmul_persistent(a, b)


def launch_buggy(a, b):
    return _launch("buggy", a, b)


def launch_fixed(a, b):
    return _launch("fixed", a, b)


def make_inputs(*, device, gen, m=32, k=128, n=1024):
    """As sglang's test_batch_invariant_ops makes them: a = linspace(-100, 100) over M * K values,
    shape (M, K); b = linspace(-100, 100) over K * N values, shape (N, K), transposed (a
    non-contiguous (K, N) view); bf16, one of the test's two dtypes. The values are fixed, as in
    the test (gen is not used)."""
    a = torch.linspace(-100, 100, m * k, dtype=torch.bfloat16).reshape(m, k)
    b = torch.linspace(-100, 100, k * n, dtype=torch.bfloat16).reshape(n, k)
    return {"a": a.to(device), "b": b.to(device).transpose(0, 1)}


def reference(a, b):
    """a @ b (the inputs' values, in float64)."""
    return a @ b


FUZZ = {"m": (1, 256), "k": (1, 1024), "n": (1, 4096)}
