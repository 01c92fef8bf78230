"""Glue for vllm's rejection sampler, recovered-token step (vllm/v1/sample/rejection_sampler.py).

The project's launcher sample_recovered_tokens(max_spec_len, num_draft_tokens, cu_num_draft_tokens,
draft_token_ids, draft_probs, target_probs, sampling_metadata, device) is called on the n-gram path
(draft_probs=None). Every request is seeded (sampling_metadata.generators), so the exponential
noise q the launcher draws is the same each call and the reference can draw it too. The rest of
vllm the module imports (the sampler class around it) is stubbed.
"""

import logging
import types

import torch
import triton
import triton.language as tl

from harness.bugs.source import load

SEED = 1234
STUBS = {
    "vllm.logger": {"init_logger": logging.getLogger},
    "vllm.triton_utils": {"triton": triton, "tl": tl},
    "vllm.v1.sample.metadata": {"SamplingMetadata": object},
    "vllm.v1.sample.ops.topk_topp_sampler": {"apply_top_k_top_p": None},
    "vllm.v1.spec_decode.metadata": {"SpecDecodeMetadata": object},
}


def _generators(batch, device):
    return {i: torch.Generator(device=device).manual_seed(SEED + i) for i in range(batch)}


def _run(variant, target_probs, draft_token_ids, cu_num_draft_tokens):
    mod = load(__file__, variant, stubs=STUBS)
    cu = cu_num_draft_tokens.tolist()
    num_draft = [b - a for a, b in zip([0] + cu[:-1], cu)]
    meta = types.SimpleNamespace(generators=_generators(len(num_draft), target_probs.device))
    return mod.sample_recovered_tokens(max(num_draft), num_draft, cu_num_draft_tokens, draft_token_ids, None,
                                       target_probs, meta, target_probs.device)


def launch_buggy(target_probs, draft_token_ids, cu_num_draft_tokens):
    return _run("buggy", target_probs, draft_token_ids, cu_num_draft_tokens)


def launch_fixed(target_probs, draft_token_ids, cu_num_draft_tokens):
    return _run("fixed", target_probs, draft_token_ids, cu_num_draft_tokens)


def make_inputs(*, device, gen, batch=4, k=3, vocab=1000):
    """`batch` requests of `k` draft tokens each; target probabilities as upstream's test makes them
    (softmax of uniform logits)."""
    n = batch * k
    target_probs = torch.softmax(torch.rand(n, vocab, generator=gen), dim=-1)
    draft = torch.randint(0, vocab, (n,), generator=gen)
    cu = torch.arange(1, batch + 1, dtype=torch.int32) * k
    return {"target_probs": target_probs.to(device), "draft_token_ids": draft.to(device),
            "cu_num_draft_tokens": cu.to(device)}


def reference(target_probs, draft_token_ids, cu_num_draft_tokens):
    """The token with the largest p / q over the target distribution without the draft token."""
    out = torch.empty_like(draft_token_ids)
    start = 0
    for r, end in enumerate(cu_num_draft_tokens.tolist()):
        # drawn where the launcher draws it (its generators are on the probabilities' device): a CPU generator
        # and a CUDA one give other numbers for one seed
        q = torch.empty(target_probs.shape[-1], dtype=torch.float32, device=target_probs.device)
        q.exponential_(generator=torch.Generator(device=target_probs.device).manual_seed(SEED + r))
        for t in range(start, end):
            p = target_probs[t].clone()
            p[draft_token_ids[t]] = 0
            out[t] = torch.argmax(p / q.to(p.dtype).to(p.device))
        start = end
    return out


FUZZ = {"batch": (1, 8), "k": (1, 5), "vocab": (2, 1000)}
