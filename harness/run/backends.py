"""Which backends a run can use here: the GPU when CUDA has one, the interpreter always."""

from __future__ import annotations

import itertools
import os

from harness.errors import UsageError


def _driver_gpus(root: str = "/proc/driver/nvidia/gpus") -> int | None:
    """NVIDIA GPUs the driver shows (``/proc/driver/nvidia/gpus``), less any that
    ``CUDA_VISIBLE_DEVICES`` hides; None when this cannot be told without torch."""
    if not os.path.isdir(root):
        return None if os.path.exists("/dev/kfd") else 0  # ROCm: ask torch; no driver: no GPU
    n = len(os.listdir(root))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:  # CUDA stops at the first invalid entry (such as -1)
        ids = [v.strip() for v in visible.split(",") if v.strip()]
        n = min(n, len(list(itertools.takewhile(lambda v: not v.startswith("-"), ids))))
    return n


def gpu_count() -> int:
    """CUDA GPUs here. From the driver when it can (a parent process need not import torch,
    which costs seconds); from torch otherwise."""
    n = _driver_gpus()
    if n is not None:
        return n
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count()


def cuda_available() -> bool:
    """True when there is a CUDA GPU to run kernels on."""
    return gpu_count() > 0


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
