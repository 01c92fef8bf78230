"""fastvideo 0.2.1's ``layernorm_param`` (fastvideo_kernel/turbodiffusion_ops.py), called as released, against
``torch.nn.functional.layer_norm``: right for a power-of-two width, wrong for another (lint's TL203: the padding
lanes of ``x - mean`` enter the variance). Under the Triton interpreter, on a CPU; the code is not copied here.

    pip download --no-deps fastvideo==0.2.1 -d /tmp/fv && python -m zipfile -e /tmp/fv/fastvideo-0.2.1-*.whl /tmp/fv/src
    python benchmarks/found/fastvideo_layernorm_padding.py /tmp/fv/src
"""

import importlib.util
import os
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")


def main(root: str) -> int:
    import torch

    path = Path(root) / "fastvideo" / "fastvideo-kernel" / "python" / "fastvideo_kernel" / "turbodiffusion_ops.py"
    if not path.is_file():
        print(f"error: {path} not found (extract the fastvideo 0.2.1 wheel there)", file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location("turbodiffusion_ops", path)
    ops = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ops)
    torch.manual_seed(0)
    wrong = False
    for n in (256, 320):
        x = torch.randn(64, n) + 3.0  # 64 rows: a multiple of the kernel's 32, so no row runs past the end
        w, b = torch.ones(n), torch.zeros(n)
        y, _, _ = ops.layernorm_param(x, w, b, 1e-6)
        expected = torch.nn.functional.layer_norm(x, (n,), w, b, 1e-6)
        err = (y - expected).abs().max().item()
        print(f"width {n}: max |layernorm_param - torch layer_norm| = {err:.3e} ({'wrong' if err > 1e-3 else 'right'})")
        wrong |= err > 1e-3
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
