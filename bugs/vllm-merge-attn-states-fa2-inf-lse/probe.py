"""Glue for vllm's Triton merge_attn_states (vllm/attention/ops/triton_merge_attn_states.py),
which combines two partial attention results (output, log-sum-exp) of the same queries,
e.g. MLA chunked prefill's cached-context part (prefix) and new-token part (suffix).

make_inputs gives both partials for `tokens` queries. empty_every=k marks every k-th
token's prefix as empty, the way FlashAttention-2 reports a zero-length context: output 0
and lse = +inf (FlashAttention-3 reports -inf). The reference merges in float64 and
treats an empty partial, lse = +-inf, as contributing nothing.
"""

import torch

from harness.bugs.source import load


def _launch(variant, prefix_output, prefix_lse, suffix_output, suffix_lse):
    mod = load(__file__, variant)
    output = torch.empty_like(prefix_output)
    mod.merge_attn_states(output, prefix_output, prefix_lse, suffix_output, suffix_lse)
    return output


def launch_buggy(prefix_output, prefix_lse, suffix_output, suffix_lse):
    return _launch("buggy", prefix_output, prefix_lse, suffix_output, suffix_lse)


def launch_fixed(prefix_output, prefix_lse, suffix_output, suffix_lse):
    return _launch("fixed", prefix_output, prefix_lse, suffix_output, suffix_lse)


def make_inputs(*, device, gen, tokens=16, heads=4, head_size=128, empty_every=0):
    prefix_output = torch.randn(tokens, heads, head_size, generator=gen).half()
    suffix_output = torch.randn(tokens, heads, head_size, generator=gen).half()
    prefix_lse = torch.randn(heads, tokens, generator=gen) * 3
    suffix_lse = torch.randn(heads, tokens, generator=gen) * 3
    if empty_every:
        empty = torch.arange(tokens) % empty_every == 0
        prefix_output[empty] = 0
        prefix_lse[:, empty] = float("inf")
    return {"prefix_output": prefix_output.to(device), "prefix_lse": prefix_lse.to(device),
            "suffix_output": suffix_output.to(device), "suffix_lse": suffix_lse.to(device)}


def reference(prefix_output, prefix_lse, suffix_output, suffix_lse):
    p = torch.where(torch.isinf(prefix_lse), float("-inf"), prefix_lse).T[:, :, None]  # [tokens, heads, 1]
    s = torch.where(torch.isinf(suffix_lse), float("-inf"), suffix_lse).T[:, :, None]
    m = torch.maximum(p, s)
    wp, ws = torch.exp(p - m), torch.exp(s - m)
    return (prefix_output * wp + suffix_output * ws) / (wp + ws)


FUZZ = {"tokens": (1, 64), "heads": (1, 8), "empty_every": (0, 4)}
