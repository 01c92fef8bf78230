"""Inputs and reference for bf16-accumulation: a bias gradient summed over many chunks.

``dy`` is a bf16 upstream gradient of shape ``(n_rows, n_cols)`` (tokens by features),
zero-mean as gradients are, and the bias gradient is its column sum. The launcher walks
the tokens in chunks of 16 rows, the way a chunked loss (fused linear cross-entropy)
or gradient accumulation over micro-batches does, and adds each chunk into the running
result. The reference is the column sum in float64; the tolerance (rtol = 1e-2) allows
the one rounding of the result to bf16 (at most half a bf16 ulp, 2**-8 relative, when
rounding to nearest) and nothing like the error of rounding the running sum at every
chunk.
"""

import torch

from harness.buffers import guarded, output


def make_inputs(*, device, gen, n_rows, n_cols):
    return {
        "dy": guarded(torch.randn(n_rows, n_cols, generator=gen).bfloat16(), device),
        "db": output((n_cols,), torch.bfloat16, device),
    }


def reference(dy):
    return dy.double().sum(dim=0)
