"""Glue for sglang-lora-sgemm-b-output-dim-tail: sglang's own sgemm_lora_b_fwd (the LoRA-B
"expand" of the Triton LoRA backend) on a batch of sequences that use different adapters,
adding the scaled LoRA delta into the base layer's output (base_output), as the backend
does for a LoRA-wrapped linear layer.

LoRABatchInfo is only a type annotation in the module; the glue passes a plain namespace
with the fields the launcher reads (bs, max_len, seg_lens, seg_indptr, weight_indices,
lora_ranks, scalings).
"""

from types import SimpleNamespace

import torch

from harness.bugs.source import load

STUBS = {"sglang.srt.lora.utils": {"LoRABatchInfo": object}}


def _run(variant, x, weights, base_output, seg_lens, weight_indices, lora_ranks, scalings):
    mod = load(__file__, variant, stubs=STUBS)
    seg_indptr = torch.zeros(seg_lens.numel() + 1, dtype=torch.int32, device=seg_lens.device)
    seg_indptr[1:] = torch.cumsum(seg_lens, 0)
    info = SimpleNamespace(bs=seg_lens.numel(), num_segments=seg_lens.numel(), max_len=int(seg_lens.max()),
                           seg_lens=seg_lens, seg_indptr=seg_indptr, weight_indices=weight_indices,
                           lora_ranks=lora_ranks, scalings=scalings, use_cuda_graph=False, permutation=None)
    return mod.sgemm_lora_b_fwd(x, weights, info, base_output=base_output)


def launch_buggy(x, weights, base_output, seg_lens, weight_indices, lora_ranks, scalings):
    return _run("buggy", x, weights, base_output, seg_lens, weight_indices, lora_ranks, scalings)


def launch_fixed(x, weights, base_output, seg_lens, weight_indices, lora_ranks, scalings):
    return _run("fixed", x, weights, base_output, seg_lens, weight_indices, lora_ranks, scalings)


def make_inputs(*, device, gen, batch=3, seqlen=7, output_dim=512, rank=16, num_lora=2):
    dt = torch.float16  # the model dtype the LoRA layers run in
    lens = torch.tensor([seqlen + (5 * i) % 9 for i in range(batch)], dtype=torch.int32)
    s = int(lens.sum())
    x = torch.randn(s, rank, generator=gen).to(dt)  # the LoRA-A result, (tokens, max_rank)
    weights = (torch.randn(num_lora, output_dim, rank, generator=gen) * 0.1).to(dt)
    base_output = torch.randn(s, output_dim, generator=gen).to(dt)
    weight_indices = (torch.arange(batch) % num_lora).to(torch.int32)
    lora_ranks = torch.full((num_lora,), rank, dtype=torch.int32)
    scalings = torch.linspace(0.5, 2.0, num_lora)
    return {"x": x.to(device), "weights": weights.to(device), "base_output": base_output.to(device),
            "seg_lens": lens.to(device), "weight_indices": weight_indices.to(device),
            "lora_ranks": lora_ranks.to(device), "scalings": scalings.to(device)}


def reference(x, weights, base_output, seg_lens, weight_indices, lora_ranks, scalings):
    """out = base_output + scaling * x[:, :rank] @ W[:, :rank].T, per segment's adapter."""
    out = base_output.to(torch.float64).clone()
    start = 0
    for i, n in enumerate(seg_lens.tolist()):
        w = int(weight_indices[i])
        r = int(lora_ranks[w])
        xs = x[start:start + n, :r].to(torch.float64)
        out[start:start + n] += float(scalings[w]) * (xs @ weights[w, :, :r].to(torch.float64).T)
        start += n
    return out


FUZZ = {"batch": (1, 6), "seqlen": (1, 40), "output_dim": (1, 1100)}
