"""A probe file for torchao 0.18.0's blockwise FP8 training GEMM (torchao/prototype/blockwise_fp8_training/kernels.py,
``triton_fp8_gemm_1x128_128x128``, the forward GEMM of ``Float8BlockwiseLinear``), called as released (never
copied): the activation quantized with ``triton_fp8_blockwise_act_quant_lhs``, the weight with
``triton_fp8_blockwise_weight_quant_transposed_rhs`` (as linear.py's forward does), then the GEMM, for 100 tokens.
The kernel loads the scales ``a_s`` and ``b_s`` at every row and column of its tile with no mask (lines 250-251),
so when the autotuner's tile does not divide the token count they are read past their end; the result is still
right (those rows are not stored), so the reference detector stays quiet and memcheck shows the reads.

    pip install --no-deps --target /tmp/torchao torchao==0.18.0
    TORCHAO_SITE=/tmp/torchao python -m harness probe benchmarks/found/probe_torchao_blockwise_fp8_gemm.py \
        --backend interpreter --detectors memcheck
"""

import os
import sys

import torch

sys.path.insert(0, os.environ.get("TORCHAO_SITE", "/tmp/torchao"))

from torchao.prototype.blockwise_fp8_training import kernels  # noqa: E402


def launch(a, b):
    aq, a_s = kernels.triton_fp8_blockwise_act_quant_lhs(a, 128)
    bq, b_s = kernels.triton_fp8_blockwise_weight_quant_transposed_rhs(b.t().contiguous(), 128)
    return kernels.triton_fp8_gemm_1x128_128x128(aq, bq, a_s, b_s, block_size=128, out_dtype=torch.float32)


def make_inputs(*, device, gen, M=100, K=256, N=128):
    return {"a": torch.randn(M, K, generator=gen).to(device), "b": torch.randn(K, N, generator=gen).to(device)}


def reference(a, b):
    return a @ b
