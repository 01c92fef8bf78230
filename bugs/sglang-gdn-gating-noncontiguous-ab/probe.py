"""Glue for sglang-gdn-gating-noncontiguous-ab: sglang's own fused_gdn_gating (the decode-time
gate of a Gated DeltaNet layer: g = -exp(A_log) * softplus(a + dt_bias), beta = sigmoid(b)),
called on one token per sequence.

``packed=1`` gives a and b as the model's fallback path produced them: the two halves of one
(batch, 2 * heads) projection output, split into column views whose row stride is 2 * heads.
``packed=0`` gives contiguous a and b. The launcher returns g and beta; the glue joins them.
"""

import torch
import torch.nn.functional as F

from harness.bugs.source import load


def _run(variant, A_log, a, b, dt_bias):
    mod = load(__file__, variant)
    g, beta = mod.fused_gdn_gating(A_log, a, b, dt_bias)
    return torch.cat([g.reshape(-1), beta.reshape(-1)])


def launch_buggy(A_log, a, b, dt_bias):
    return _run("buggy", A_log, a, b, dt_bias)


def launch_fixed(A_log, a, b, dt_bias):
    return _run("fixed", A_log, a, b, dt_bias)


def make_inputs(*, device, gen, batch=16, heads=32, packed=0):
    dt = torch.float16  # a model run in fp16 (bf16 would do as well on a GPU; the interpreter rounds fp32 -> bf16 by truncation)
    A_log = torch.rand(heads, generator=gen).log()
    dt_bias = torch.randn(heads, generator=gen) * 0.5
    if packed:
        ba = torch.randn(batch, 2 * heads, generator=gen).to(dt).to(device)
        b, a = ba.split([heads, heads], dim=1)  # views with row stride 2 * heads
    else:
        a = torch.randn(batch, heads, generator=gen).to(dt).to(device)
        b = torch.randn(batch, heads, generator=gen).to(dt).to(device)
    return {"A_log": A_log.to(device), "a": a, "b": b, "dt_bias": dt_bias.to(device)}


def reference(A_log, a, b, dt_bias):
    x = a.to(torch.float64) + dt_bias.to(torch.float64)
    g = -torch.exp(A_log.to(torch.float64)) * F.softplus(x, beta=1.0, threshold=20.0)
    # the kernel stores beta in b's dtype (then into the float32 output): round it the same way
    beta = torch.sigmoid(b.to(torch.float32)).to(b.dtype).to(torch.float64)
    return torch.cat([g.reshape(-1), beta.reshape(-1)])


FUZZ = {"batch": (1, 64), "heads": (1, 80)}
