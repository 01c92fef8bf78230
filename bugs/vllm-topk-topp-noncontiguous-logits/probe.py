"""Glue for vllm's Triton top-k/top-p sampler (vllm/v1/sample/ops/topk_topp_triton.py).

The launcher, apply_top_k_top_p_triton(logits, k, p), masks logits in place and returns
them. make_inputs gives the logits as a view of a buffer whose rows are `pad` elements
longer than the vocabulary (pad=0: a contiguous tensor, where both versions agree).
Only top-k is exercised (p=None), so the reference is exact: a row keeps its k largest
logits and every other entry becomes -inf.
"""

import torch
import triton
import triton.language as tl

from harness.bugs.source import load

STUBS = {
    "vllm.triton_utils": {"triton": triton, "tl": tl},
    "vllm.utils.platform_utils": {"num_compute_units": lambda index=None: 4},
}


def _launch(variant, logits, k):
    mod = load(__file__, variant, stubs=STUBS)
    mod.reset_buffer_cache = lambda: None
    mod._TRITON_BUFFER_CACHE.clear()
    mod._TRITON_TABLE_CACHE.clear()
    return mod.apply_top_k_top_p_triton(logits, k, None)


def launch_buggy(logits, k):
    return _launch("buggy", logits, k)


def launch_fixed(logits, k):
    return _launch("fixed", logits, k)


def make_inputs(*, device, gen, batch=4, vocab=1000, pad=0):
    base = torch.randn(batch, vocab + pad, generator=gen) * 3.0
    k = torch.randint(1, 50, (batch,), generator=gen, dtype=torch.int32)
    return {"logits": base.to(device)[:, :vocab], "k": k.to(device)}


def reference(logits, k):
    out = torch.full_like(logits, float("-inf"))
    for r in range(logits.shape[0]):
        kk = int(k[r])
        thresh = torch.topk(logits[r], kk).values[-1]
        keep = logits[r] >= thresh
        out[r] = torch.where(keep, logits[r], out[r])
    return out


FUZZ = {"batch": (1, 8), "vocab": (2, 3000), "pad": (0, 64)}
