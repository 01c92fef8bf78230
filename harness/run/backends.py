"""Which backends a run can use here: the GPU when CUDA has one, the interpreter always."""

from __future__ import annotations

from harness.errors import UsageError


def cuda_available() -> bool:
    """True when torch imports and sees a CUDA GPU (imports torch: call it only to run kernels)."""
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def resolve_backends(choice: str) -> list[str]:
    """``gpu``, ``interpreter`` or ``all`` (the GPU if there is one, then the interpreter)."""
    if choice == "gpu":
        if not cuda_available():
            raise UsageError("--backend gpu: no CUDA GPU is available on this machine "
                             "(use --backend interpreter)")
        return ["gpu"]
    if choice == "interpreter":
        return ["interpreter"]
    return (["gpu"] if cuda_available() else []) + ["interpreter"]
