"""deepspeed 0.19.8's ``matmul_fp8_triton`` (deepspeed/ops/fp_quantizer/fp8_gemm_triton.py; what the exported
``deepspeed.ops.fp_quantizer.matmul_fp8`` runs wherever Triton is supported), called as released, against the
same FP8 weight dequantized in torch with its group scales.

``FP_Quantize`` quantizes a weight in groups of ``group_size`` consecutive elements of the flattened (K, N)
weight (quantize.py: ``num_groups = input.numel() // group_size``), one scale per group; element (k, n) has
group ``(k * N + n) // group_size``. The kernel finds a tile's scales as
``offs_k * (stride_bk // G) + (pid_n * BLOCK_SIZE_N) // G + (k * BLOCK_SIZE_K * stride_bk) // G``
(fp8_gemm_triton.py:39-40 and :46): one scale per row of the tile, the group of the tile's first column, and the
row's group found by dividing ``N`` by the group size on its own. That is the right group only when ``N`` is a
multiple of the group size and the group size a multiple of the tile width (64 columns below 256 tokens, 128 from
256 on). DeepSpeed's default group size is 512 (``FP_Quantize(group_size=512)``, ``QuantizationConfig``), so a
layer whose output width is not a multiple of 512 (Llama-2-7B's MLP, 11,008) gets wrong scales; a group size of
64 is wrong from 256 tokens on. Upstream's test (tests/unit/ops/fp_quantizer/test_fp8_gemm.py) uses group size 128
and N = 8,192, where both hold.

The reference decodes the 8-bit weight with the kernel's own byte format (sign bit to bit 15, the other seven
bits shifted left by 4, plus 0x3C00, read as bfloat16: the format FP_Quantize writes) and multiplies each
element by its group's scale. Under the Triton interpreter, on a CPU, with the casebook's interpreter fixes
(``harness.run.triton_compat.patched``: the plain interpreter mis-multiplies this kernel's bfloat16 ``tl.dot``);
only this one file of the release is loaded (by path), the code is not copied here:

    pip download --no-deps --no-binary :all: deepspeed==0.19.8 -d /tmp/ds && tar -xzf /tmp/ds/deepspeed-0.19.8.tar.gz -C /tmp/ds
    python benchmarks/found/deepspeed_fp8_gemm_group_scales.py /tmp/ds/deepspeed-0.19.8

Exit 1 when a case is wrong (the bug), 0 when none is, 2 when the file is missing.
"""

import os
import sys
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for harness.run


def decode(w, torch):
    """The kernel's 8-bit weight format, read as bfloat16, in float32."""
    bits = ((w.to(torch.int32) & 0x80) << 8) | ((w.to(torch.int32) & 0x7F) << 4)
    bits = (bits + 0x3C00) & 0xFFFF
    return torch.where(bits >= 0x8000, bits - 0x10000, bits).to(torch.int16).view(torch.bfloat16).float()


def main(root: str) -> int:
    import torch
    import triton

    from _released import from_file

    path = Path(root) / "deepspeed" / "ops" / "fp_quantizer" / "fp8_gemm_triton.py"
    module = from_file(path, "deepspeed_fp8_gemm_triton_0198")
    if module is None:
        print(f"error: {path} not found (extract the deepspeed 0.19.8 source distribution there)", file=sys.stderr)
        return 2
    from harness.run.triton_compat import patched

    print(f"deepspeed 0.19.8 ({path.name} as released), torch {torch.__version__}, triton {triton.__version__}; "
          f"CPU, TRITON_INTERPRET=1")
    gen = torch.Generator().manual_seed(0)
    cases = [  # (tokens M, K, N, group size): the first and the last hold the kernel's two assumptions
        (16, 512, 1024, 512),
        (16, 512, 768, 512),
        (16, 256, 256, 64),
        (256, 256, 256, 64),
    ]
    wrong = False
    with patched(interpreter=True):
        for M, K, N, G in cases:
            x = torch.randn(M, K, generator=gen).to(torch.bfloat16)
            w = torch.randint(0, 256, (K, N), generator=gen, dtype=torch.uint8) & 0xBF  # moderate exponents
            scale = torch.rand(K * N // G, generator=gen) + 0.5
            want = x.float() @ (decode(w, torch) * scale.repeat_interleave(G).reshape(K, N))
            got = module.matmul_fp8_triton(x, w, scale, G).float()
            err = ((got - want).abs().max() / want.abs().max()).item()
            bad = not err <= 2e-2  # bfloat16 inputs and output: about 1e-2 at most when right
            wrong |= bad
            holds = N % G == 0 and G % (128 if M >= 256 else 64) == 0
            print(f"M={M} K={K} N={N} group {G} (N a multiple of the group and the group of the tile width: "
                  f"{'yes' if holds else 'no'}): max error / max |reference| = {err:.2e}: "
                  f"{'wrong' if bad else 'right'}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
