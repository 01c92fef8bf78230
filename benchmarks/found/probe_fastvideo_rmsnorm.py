"""A probe file for fastvideo 0.2.1's ``rmsnorm`` (fastvideo_kernel/turbodiffusion_ops.py), called as released
(never copied): 40 rows of width 64, so the kernel takes 32 rows per program on a cdiv(40, 32) grid.

    pip download --no-deps fastvideo==0.2.1 -d /tmp/fv && python -m zipfile -e /tmp/fv/fastvideo-0.2.1-*.whl /tmp/fv/src
    FASTVIDEO_SRC=/tmp/fv/src python -m harness probe benchmarks/found/probe_fastvideo_rmsnorm.py \
        --backend interpreter --detectors memcheck
"""

import importlib.util
import os

import torch

ROOT = os.environ.get("FASTVIDEO_SRC", "/tmp/fv/src")
_path = os.path.join(ROOT, "fastvideo", "fastvideo-kernel", "python", "fastvideo_kernel", "turbodiffusion_ops.py")
_spec = importlib.util.spec_from_file_location("turbodiffusion_ops", _path)
ops = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ops)


def launch(x, w):
    y, rstd = ops.rmsnorm(x, w, 1e-6)
    return y


def make_inputs(*, device, gen, M=40, N=64):
    x = torch.randn(M, N, generator=gen, device=device)
    w = torch.randn(N, generator=gen, device=device)
    return {"x": x, "w": w}


def reference(x, w):
    return x * torch.rsqrt((x * x).mean(dim=1, keepdim=True) + 1e-6) * w
