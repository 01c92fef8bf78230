"""Glue for sglang-causal-conv1d-fwd-state-missing-barrier: sglang's own causal_conv1d_fn
(the Triton prefill/extend path of a Mamba/GDN short convolution) on a varlen batch in
channel-last layout, every sequence continuing from a cached conv state
(has_initial_state all True, cache lines picked by cache_indices), as a chunked prefill
or extend after a prefix does.

The launcher returns the output and updates conv_states in place; the glue returns both,
flattened and joined: the race corrupts the state the program reads and rewrites.
"""

import torch

from harness.bugs.source import load


def _run(variant, x, weight, bias, conv_states, query_start_loc, cache_indices, has_initial_state):
    mod = load(__file__, variant)
    seq_lens = (query_start_loc[1:] - query_start_loc[:-1]).tolist()
    out = mod.causal_conv1d_fn(x, weight, bias, conv_states, query_start_loc, seq_lens,
                               cache_indices=cache_indices, has_initial_state=has_initial_state,
                               activation="silu")
    return torch.cat([out.reshape(-1), conv_states.reshape(-1)])


def launch_buggy(x, weight, bias, conv_states, query_start_loc, cache_indices, has_initial_state):
    return _run("buggy", x, weight, bias, conv_states, query_start_loc, cache_indices, has_initial_state)


def launch_fixed(x, weight, bias, conv_states, query_start_loc, cache_indices, has_initial_state):
    return _run("fixed", x, weight, bias, conv_states, query_start_loc, cache_indices, has_initial_state)


def make_inputs(*, device, gen, batch=3, dim=96, seqlen=13, width=4):
    lens = [seqlen + (7 * i) % 11 for i in range(batch)]
    total = sum(lens)
    x = torch.randn(total, dim, generator=gen).t()  # (dim, tokens), channel-last as the layer passes it
    weight = torch.randn(dim, width, generator=gen) * 0.5
    bias = torch.randn(dim, generator=gen) * 0.1
    lines = batch + 1
    conv_states = torch.randn(lines, width - 1, dim, generator=gen).transpose(1, 2)  # (lines, dim, width-1)
    qsl = torch.tensor([0] + lens, dtype=torch.int32).cumsum(0).to(torch.int32)
    cache_indices = torch.randperm(lines, generator=gen)[:batch].to(torch.int32)
    has_initial_state = torch.ones(batch, dtype=torch.bool)
    return {"x": x.to(device), "weight": weight.to(device), "bias": bias.to(device),
            "conv_states": conv_states.to(device), "query_start_loc": qsl.to(device),
            "cache_indices": cache_indices.to(device), "has_initial_state": has_initial_state.to(device)}


def reference(x, weight, bias, conv_states, query_start_loc, cache_indices, has_initial_state):
    """Per sequence: prepend its cached state (or zeros), convolve causally, SiLU; the cache
    line then holds the last width - 1 inputs."""
    x, w, b = x.to(torch.float64), weight.to(torch.float64), bias.to(torch.float64)
    states = conv_states.to(torch.float64).clone()
    width = w.shape[1]
    out = torch.empty_like(x)
    qsl = query_start_loc.tolist()
    for i in range(len(qsl) - 1):
        s, e = qsl[i], qsl[i + 1]
        line = int(cache_indices[i])
        init = states[line] if bool(has_initial_state[i]) else torch.zeros_like(states[line])
        full = torch.cat([init, x[:, s:e]], dim=1)
        y = torch.stack([(full[:, t:t + width] * w).sum(-1) for t in range(e - s)], dim=1) + b[:, None]
        out[:, s:e] = y * torch.sigmoid(y)
        states[line] = full[:, -(width - 1):]
    return torch.cat([out.reshape(-1), states.reshape(-1)])


FUZZ = {"batch": (1, 6), "dim": (1, 600), "seqlen": (1, 40)}
