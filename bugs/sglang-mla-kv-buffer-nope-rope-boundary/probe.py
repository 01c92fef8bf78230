"""Glue for sglang-mla-kv-buffer-nope-rope-boundary: sglang's own set_mla_kv_buffer_triton,
which writes each new token's [k_nope | k_rope] row into the MLA KV cache at its slot.

The tensors are the byte views the FP8 path hands it (uint8: the store dtype): k_nope
(tokens, 1, nope_dim), k_rope (tokens, 1, rope_dim), and the cache (slots, 1, nope_dim +
rope_dim). The result is the whole cache after the write; slots not written keep their
old bytes. nope_dim = 512 is the plain bf16/fp8 layout; 528 is DeepSeek-V3.2's FP8 NSA
layout (512 fp8 values + 16 bytes of scales), which is not a multiple of the kernel's
128-byte block.
"""

import torch

from harness.bugs.source import load


def _mod(variant):
    return load(__file__, variant, stubs={"sglang.srt.environ": {"envs": None}})


def _run(mod, kv_buffer, loc, cache_k_nope, cache_k_rope):
    mod.set_mla_kv_buffer_triton(kv_buffer, loc, cache_k_nope, cache_k_rope)
    return kv_buffer


def launch_buggy(kv_buffer, loc, cache_k_nope, cache_k_rope):
    return _run(_mod("buggy"), kv_buffer, loc, cache_k_nope, cache_k_rope)


def launch_fixed(kv_buffer, loc, cache_k_nope, cache_k_rope):
    return _run(_mod("fixed"), kv_buffer, loc, cache_k_nope, cache_k_rope)


FUZZ = {"tokens": (1, 64), "nope_dim": (1, 700), "rope_dim": (1, 200)}


def make_inputs(*, device, gen, tokens=24, slots=64, nope_dim=512, rope_dim=64):
    def bytes_(*shape):
        return torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8)

    kv_buffer = bytes_(slots, 1, nope_dim + rope_dim)
    loc = torch.randperm(slots, generator=gen)[:tokens].to(torch.int64)
    return {"kv_buffer": kv_buffer.to(device), "loc": loc.to(device),
            "cache_k_nope": bytes_(tokens, 1, nope_dim).to(device), "cache_k_rope": bytes_(tokens, 1, rope_dim).to(device)}


def reference(kv_buffer, loc, cache_k_nope, cache_k_rope):
    out = kv_buffer.clone()
    out[loc] = torch.cat([cache_k_nope, cache_k_rope], dim=-1)
    return out
