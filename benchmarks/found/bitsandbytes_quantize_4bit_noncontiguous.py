"""bitsandbytes 0.50.2's Triton backend ``quantize_4bit`` (bitsandbytes/backends/triton/ops.py, the kernel
``quantize_nf4_blockwise_kernel`` / ``quantize_fp4_blockwise_kernel`` in kernels_4bit.py), called as released, on a
transposed view against the same values made contiguous. The kernel reads ``A`` at flat offsets and the launcher
passes ``A`` as it came (it only flattens it when its size is not a multiple of the block size, and ``view(-1)``
then raises for a view like this): a non-contiguous input is quantized in memory order while the quantization
state records its logical shape, so dequantizing gives the values back in the wrong places. bitsandbytes
registers this function as ``bitsandbytes::quantize_4bit`` for Intel XPU devices (backends/xpu/ops.py, with or
without the SYCL library), so ``bitsandbytes.functional.quantize_4bit(W.t())`` on an XPU takes this path; the
CUDA backend calls ``A.contiguous()`` first (pull request #1859), and the Triton backend's 8-bit
``quantize_blockwise`` got the same call in 0.50.0 (#1902), not its 4-bit neighbour.

Under the Triton interpreter, on a CPU; the code is installed from PyPI, not copied here:

    pip install --no-deps --target /tmp/bnb bitsandbytes==0.50.2
    python benchmarks/found/bitsandbytes_quantize_4bit_noncontiguous.py /tmp/bnb

Exit 1 when the transposed view's round trip differs from the contiguous copy's (the bug), 0 when it does not,
2 when bitsandbytes cannot be imported from SITE.
"""

import contextlib
import os
import sys
import types
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for harness


def main(site: str) -> int:
    sys.path.insert(0, site)
    import torch
    import triton

    from harness.bugs.source import cuda_accelerator_at_import

    try:
        # ops.py asks torch.accelerator for the device type at import; with no accelerator it is told "cuda"
        with cuda_accelerator_at_import():
            import bitsandbytes
            from bitsandbytes.backends.triton import ops
    except ImportError as exc:
        print(f"error: bitsandbytes not importable from {site}: {exc}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():  # the launcher enters <accelerator>.device(A.device): a no-op here
        ops.torch_accelerator_module = types.SimpleNamespace(device=lambda _d: contextlib.nullcontext())
    print(f"bitsandbytes {bitsandbytes.__version__}, torch {torch.__version__}, triton {triton.__version__}; "
          f"{os.environ.get('TRITON_INTERPRET') == '1' and 'CPU, TRITON_INTERPRET=1' or 'GPU'}")
    torch.manual_seed(0)
    weight = torch.randn(128, 256)  # a Linear weight (out, in); its .t() is a (256, 128) view
    wrong = False
    for quant_type in ("nf4", "fp4"):
        view = weight.t()
        copy = view.contiguous()
        got = {}
        for name, a in (("contiguous copy", copy), ("transposed view", view)):
            packed, absmax = ops.quantize_4bit(a, 64, quant_type, torch.uint8)
            got[name] = ops.dequantize_4bit(packed, absmax, 64, quant_type, a.shape, torch.float32)
        for name, back in got.items():
            rel = ((back - view).norm() / view.norm()).item()
            print(f"{quant_type}, {name}: relative error of the round trip {rel:.3f}")
        differ = (got["transposed view"] != got["contiguous copy"]).float().mean().item()
        bad = differ > 0
        wrong |= bad
        print(f"{quant_type}: {differ:.1%} of the elements differ between the view and its contiguous copy "
              f"(expected 0%): {'wrong' if bad else 'right'}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
