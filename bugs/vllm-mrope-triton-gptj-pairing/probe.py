"""Glue for vllm's Triton M-RoPE (vllm/model_executor/layers/rotary_embedding/mrope.py).

launch_*: what MRotaryEmbedding.forward_cuda does for 2-D positions: gather cos and sin from the
cos/sin cache at the t/h/w positions ([3, tokens, rotary_dim // 2] each) and call the version's
triton_mrope on copies of q and k. 0.27.0's triton_mrope takes the model's is_neox_style; 0.26.0's
takes none (its kernel always pairs NeoX-style). The rest of vllm the module imports (the
embedding classes' bases, the platform) is stubbed.
"""

import types

import torch
import triton
import triton.language as tl

from harness.bugs.source import load

STUBS = {
    "vllm.triton_utils": {"triton": triton, "tl": tl},
    "vllm.platforms": {"current_platform": types.SimpleNamespace(is_rocm=lambda: False)},
    "vllm.model_executor.layers.rotary_embedding.base": {"RotaryEmbeddingBase": object},
    "vllm.model_executor.layers.rotary_embedding.yarn_scaling_rope": {
        "YaRNScalingRotaryEmbedding": object, "yarn_get_mscale": lambda *a, **k: 1.0},
}


def _sections(rotary_dim):
    half = rotary_dim // 2
    t = half // 4
    h = (half - t) // 2
    return [t, h, half - t - h]  # 16, 24, 24 at rotary_dim 128


def _run(variant, q, k, cos_sin_cache, positions, head, neox):
    mod = load(__file__, variant, stubs=STUBS)
    rotary_dim = cos_sin_cache.shape[-1]
    cos, sin = cos_sin_cache[positions].chunk(2, dim=-1)
    args = (q.clone(), k.clone(), cos, sin, _sections(rotary_dim), head.shape[0], rotary_dim, False)
    if variant == "fixed":
        args += (bool(neox.item()),)
    return mod.triton_mrope(*args)


def launch_buggy(q, k, cos_sin_cache, positions, head, neox):
    return _run("buggy", q, k, cos_sin_cache, positions, head, neox)


def launch_fixed(q, k, cos_sin_cache, positions, head, neox):
    return _run("fixed", q, k, cos_sin_cache, positions, head, neox)


def make_inputs(*, device, gen, num_tokens=11, heads=28, kv_heads=4, head_dim=128, neox=1, max_position=4000):
    """q [tokens, heads * head_dim], k [tokens, kv_heads * head_dim], a cos/sin cache as vllm builds
    it (cos and sin of position * inverse frequency, base 10000), t/h/w positions below
    max_position. head_dim is rounded up to a power of two, at least 16 (the three sections)."""
    head_dim = max(16, triton.next_power_of_2(head_dim))
    inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    ang = torch.arange(max_position, dtype=torch.float64)[:, None] * inv[None, :]
    cache = torch.cat([ang.cos(), ang.sin()], dim=-1).to(torch.float16)
    positions = torch.randint(0, max_position, (3, num_tokens), generator=gen)
    q = torch.randn(num_tokens, heads * head_dim, generator=gen).to(torch.float16)
    k = torch.randn(num_tokens, kv_heads * head_dim, generator=gen).to(torch.float16)
    return {"q": q.to(device), "k": k.to(device), "cos_sin_cache": cache.to(device),
            "positions": positions.to(device), "head": torch.empty(head_dim, device=device),
            "neox": torch.tensor(neox)}


def reference(q, k, cos_sin_cache, positions, head, neox):
    rd = cos_sin_cache.shape[-1]
    half = rd // 2
    t, h, _ = _sections(rd)
    sec = torch.tensor([0] * t + [1] * h + [2] * (half - t - h), device=positions.device)
    cos_all, sin_all = cos_sin_cache[positions].chunk(2, dim=-1)  # [3, tokens, half]
    idx = torch.arange(half, device=positions.device)
    cos = cos_all[sec, :, idx].t()[:, None, :]  # [tokens, 1, half]
    sin = sin_all[sec, :, idx].t()[:, None, :]

    def rot(x):
        x = x.view(x.shape[0], -1, head.shape[0]).clone()
        if int(neox):
            a, b = x[..., :half].clone(), x[..., half:rd].clone()
            x[..., :half], x[..., half:rd] = a * cos - b * sin, b * cos + a * sin
        else:
            a, b = x[..., 0:rd:2].clone(), x[..., 1:rd:2].clone()
            x[..., 0:rd:2], x[..., 1:rd:2] = a * cos - b * sin, b * cos + a * sin
        return x.reshape(x.shape[0], -1)

    return rot(q), rot(k)


FUZZ = {"num_tokens": (1, 8192), "heads": (1, 28), "kv_heads": (1, 4)}
