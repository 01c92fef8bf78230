"""Glue for sglang-ep-moe-pre-reorder-int32-offset: sglang's own run_moe_ep_preproess (the
src2dst map) and pre_reorder_triton_kernel, launched as EPMoE.forward launches it (one
program per token, BLOCK_SIZE 512, no input scales, every expert local).

The result is one number per row of gateup_input (its sum in float32), in the row order
the kernel writes: the full buffer at the trigger holds over 2**31 elements and a float64
reference of it would not fit beside it. A row never written keeps the poison
torch.empty is given under the probe, and a row written from the wrong token has another
sum, so both still show.
"""

import torch

from harness.bugs.source import load


def _mod(variant):
    return load(__file__, variant, stubs={
        "sglang.srt.utils": {"ceil_div": lambda a, b: -(-a // b), "dispose_tensor": lambda t: None,
                             "is_cuda": lambda: False},
        "sglang.srt.layers.quantization.fp8_kernel": {"per_token_group_quant_fp8": None,
                                                      "sglang_per_token_group_quant_fp8": None},
        "sglang.utils": {"is_in_ci": lambda: False},
    })


def _run(mod, hidden_states, topk_ids, num_experts):
    _, src2dst, _ = mod.run_moe_ep_preproess(topk_ids, num_experts)
    gateup_input = torch.empty((topk_ids.numel(), hidden_states.shape[1]), device=hidden_states.device,
                               dtype=hidden_states.dtype)
    mod.pre_reorder_triton_kernel[(hidden_states.shape[0],)](
        hidden_states, gateup_input, src2dst, topk_ids, None,
        0, num_experts - 1, topk_ids.shape[1], hidden_states.shape[1],
        BLOCK_SIZE=512, use_per_token_if_dynamic=False,
    )
    return gateup_input.float().sum(dim=1)


def launch_buggy(hidden_states, topk_ids, num_experts):
    return _run(_mod("buggy"), hidden_states, topk_ids, num_experts)


def launch_fixed(hidden_states, topk_ids, num_experts):
    return _run(_mod("fixed"), hidden_states, topk_ids, num_experts)


FUZZ = {"tokens": (1, 128), "hidden": (1, 1100), "topk": (1, 8)}


def make_inputs(*, device, gen, tokens=64, hidden=1024, topk=4, num_experts=8):
    topk = min(topk, num_experts)
    hidden_states = torch.randn(tokens, hidden, generator=gen).to(torch.bfloat16)
    # distinct experts per token, as a router's top-k gives
    topk_ids = torch.rand(tokens, num_experts, generator=gen).argsort(dim=1)[:, :topk].to(torch.int32)
    return {"hidden_states": hidden_states.to(device), "topk_ids": topk_ids.to(device), "num_experts": num_experts}


def reference(hidden_states, topk_ids, num_experts):
    """Row d of gateup_input is the hidden vector of the token whose (token, slot) pair sorts
    to place d when the flattened expert ids are sorted stably."""
    order = torch.sort(topk_ids.reshape(-1).long(), stable=True).indices
    rows = hidden_states.to(torch.float32).sum(dim=1)
    return rows[order // topk_ids.shape[1]].double()
