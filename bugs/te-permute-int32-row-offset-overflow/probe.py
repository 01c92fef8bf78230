"""Glue for TransformerEngine's Triton MoE permutation (transformer_engine/pytorch/triton/permutation.py).

The launcher is permute_with_mask_map(inp, row_id_map, probs=None, scale=None, num_tokens,
num_experts, num_out_tokens, hidden_size, scale_hidden_dim): it gathers every token once
per expert it is routed to, grouped by expert. Its row_id_map input is built by make_inputs
in plain torch, in the layout make_row_id_map documents ([num_tokens, 2 * num_experts + 1]:
the destination rows, then their experts, then the count). The project's own
make_row_id_map is not used: its pass-2 kernel sums a masked tl.load that has no other=,
which the interpreter fills with poison (on NVIDIA GPUs those lanes read 0), so under the
interpreter it fails before the kernel with the bug runs. The launcher allocates with
device="cuda"; the glue hands the module a view of torch whose allocations go to the
inputs' device instead (a no-op on a GPU), so the same code runs under the interpreter.

The bug needs num_tokens * topk * hidden > 2**31 (a GPU); the result compared is each
permuted row's sum, so the float64 reference stays small. At small sizes both versions agree.
"""

import torch

from harness.bugs.source import load


class _TorchOn:
    """torch, with device="cuda" in allocations replaced by the inputs' device."""

    def __init__(self, device):
        self._device = device

    def __getattr__(self, name):
        f = getattr(torch, name)
        if name not in ("empty", "zeros", "ones", "full"):
            return f

        def alloc(*args, **kwargs):
            if kwargs.get("device") == "cuda":
                kwargs["device"] = self._device
            return f(*args, **kwargs)
        return alloc


def _launch(variant, inp, row_id_map, routing_map, topk):
    mod = load(__file__, variant)
    mod.torch = _TorchOn(inp.device)
    num_tokens, num_experts = routing_map.shape
    hidden = inp.shape[1]
    out, _, _ = mod.permute_with_mask_map(inp, row_id_map, None, None, num_tokens, num_experts,
                                          num_tokens * topk, hidden, 0)
    return out.float().sum(dim=1)  # one number a row: see reference()


def launch_buggy(inp, row_id_map, routing_map, topk):
    return _launch("buggy", inp, row_id_map, routing_map, topk)


def launch_fixed(inp, row_id_map, routing_map, topk):
    return _launch("fixed", inp, row_id_map, routing_map, topk)


def _row_id_map(routing_map, topk):
    """make_row_id_map's result: token t routed to expert e goes to row (tokens routed to
    experts before e) + (tokens before t routed to e); per token the topk rows, their experts, topk."""
    rm = routing_map.long()
    tokens, experts = rm.shape
    before = torch.cumsum(rm.sum(0), 0) - rm.sum(0)
    rows = before[None, :] + torch.cumsum(rm, 0) - rm
    out = torch.full((tokens, 2 * experts + 1), -1, dtype=torch.int32)
    exp_idx = torch.nonzero(routing_map)[:, 1].reshape(tokens, topk)
    out[:, :topk] = torch.gather(rows, 1, exp_idx).to(torch.int32)
    out[:, experts:experts + topk] = exp_idx.to(torch.int32)
    out[:, 2 * experts] = topk
    return out


def make_inputs(*, device, gen, tokens=64, experts=8, topk=2, hidden=256):
    inp = torch.randn(tokens, hidden, generator=gen).to(torch.bfloat16)
    chosen = torch.rand(tokens, experts, generator=gen).argsort(dim=1)[:, :topk]
    routing_map = torch.zeros(tokens, experts, dtype=torch.bool)
    routing_map.scatter_(1, chosen, True)
    return {"inp": inp.to(device), "row_id_map": _row_id_map(routing_map, topk).to(device),
            "routing_map": routing_map.to(device), "topk": topk}


def reference(inp, row_id_map, routing_map, topk):
    """The sum of each permuted row (the rows of each expert's tokens, expert by expert): at the
    GPU trigger the permuted buffer has over 2**31 elements, and a float64 copy of it (17 GB)
    beside the probe's others would not fit in the host's memory. A row copied from the wrong
    place has another sum; a row never written keeps the probe's poison."""
    rm = routing_map.bool()
    sums = inp.sum(dim=1)
    return torch.cat([sums[rm[:, e]] for e in range(rm.shape[1])], dim=0)


FUZZ = {"tokens": (1, 128), "experts": (2, 16), "topk": (1, 2), "hidden": (1, 300)}
GPU_SIZES = {"tokens": 65552, "experts": 16, "topk": 8, "hidden": 4096}
# Row sums of bf16 rows: the interpreter's bf16 rounding differs from the GPU's in the last bit
# of some elements; a row copied from the wrong token differs by tens.
TOLERANCE = {"rtol": 3e-2, "atol": 0.5}
