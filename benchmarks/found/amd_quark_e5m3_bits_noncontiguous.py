"""amd-quark 0.13's ``triton_convert_fp32_to_e5m3_bits`` (quark/torch/kernel/float8_e5m3/triton.py; what
``quark.torch.kernel.float8_e5m3.convert_fp32_to_e5m3_bits_func`` runs for a tensor on a GPU, while a CPU tensor
goes to the package's own torch reference), called as released, against that reference
(``reference_convert_fp32_to_e5m3_bits``) on the same tensor. Lint's TL104 (preview) flags the launch (line 191):
the kernel reads the input at flat offsets and the launcher neither copies, refuses nor passes the strides of a
view; its output is ``torch.empty_like(input)``. For a transposed view both keep the same dense layout, so the
result is right; for a slice of a wider buffer (rows padded) the output is contiguous while the kernel reads
the slice's memory as if it were, so the codes come from the wrong elements. The fused ``fp8_e5m3_qdq`` beside
it clamps first (a dense copy), so it is right.

Under the Triton interpreter, on a CPU (the launcher's ``with torch.cuda.device(...)`` made a no-op there);
only the three modules of quark/torch/kernel/float8_e5m3 are imported (the package's ``quark.torch`` needs
more than this machine has), the code is not copied here:

    pip install --no-deps --target /tmp/quark amd-quark==0.13
    python benchmarks/found/amd_quark_e5m3_bits_noncontiguous.py /tmp/quark

Exit 1 when a layout gives codes other than the reference's (the bug), 0 when none does, 2 when amd-quark is
not installed in SITE.
"""

import contextlib
import os
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")


def main(site: str) -> int:
    import torch
    import triton

    root = Path(site) / "quark"
    kernel_dir = root / "torch" / "kernel" / "float8_e5m3"
    dist = next(Path(site).glob("amd_quark-*.dist-info"), None)
    if not (kernel_dir / "triton.py").is_file() or dist is None:
        print(f"error: amd-quark not installed in {site} (pip install --no-deps --target {site} amd-quark==0.13)",
              file=sys.stderr)
        return 2
    sys.path.insert(0, site)
    from _released import bare_packages

    bare_packages({"quark.torch": root / "torch", "quark.torch.kernel": root / "torch" / "kernel",
                   "quark.torch.kernel.float8_e5m3": kernel_dir})
    if not torch.cuda.is_available():
        torch.cuda.device = lambda _device: contextlib.nullcontext()
    from importlib.metadata import PathDistribution

    from quark.torch.kernel.float8_e5m3 import triton as quark_triton
    from quark.torch.kernel.float8_e5m3.reference import (
        reference_convert_fp32_to_e5m3_bits,
        reference_float32_qdq_to_float8_e5m3,
    )

    device = "cuda" if torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1" else "cpu"
    where = torch.cuda.get_device_name() if device == "cuda" else "CPU, TRITON_INTERPRET=1"
    print(f"amd-quark {PathDistribution(dist).version}, torch {torch.__version__}, triton {triton.__version__}; "
          f"{where}")
    torch.manual_seed(0)
    wide = torch.randn(64, 160, device=device)
    wrong = False
    for name, x in (("contiguous", wide[:, :128].contiguous()),
                    ("transposed view", wide[:, :128].contiguous().t()),
                    ("slice of a wider buffer", wide[:, :128])):
        bits = quark_triton.triton_convert_fp32_to_e5m3_bits(x).cpu()
        want = reference_convert_fp32_to_e5m3_bits(x.cpu())
        differ = (bits != want).float().mean().item()
        qdq = quark_triton.fp8_e5m3_qdq(x).cpu()
        qdq_differ = (qdq != reference_float32_qdq_to_float8_e5m3(x.cpu())).float().mean().item()
        bad = differ > 0 or qdq_differ > 0
        wrong |= bad
        print(f"{name}, stride {tuple(x.stride())}: triton_convert_fp32_to_e5m3_bits differs from the reference in "
              f"{differ:.1%} of the elements, fp8_e5m3_qdq in {qdq_differ:.1%} (expected 0%): "
              f"{'wrong' if bad else 'right'}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
