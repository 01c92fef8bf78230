"""Glue for sglang-causal-conv1d-update-multitoken-state-shift: sglang's own
causal_conv1d_update (the Triton decode step of a Mamba/GDN short convolution), called
without speculative decoding (num_accepted_tokens=None) on x of shape (batch, dim, seqlen).

The conv state is laid out as sglang's mamba cache holds it: (batch, dim, width - 1) with
the feature dimension contiguous (stride(-2) == 1). The launcher overwrites x with the
output and updates conv_state in place; the glue returns both, flattened and joined, so a
wrong state shows as well as a wrong output.
"""

import torch

from harness.bugs.source import load


def _run(variant, x, conv_state, weight, bias):
    mod = load(__file__, variant)
    out = mod.causal_conv1d_update(x, conv_state, weight, bias, activation="silu")
    return torch.cat([out.reshape(-1), conv_state.reshape(-1)])


def launch_buggy(x, conv_state, weight, bias):
    return _run("buggy", x, conv_state, weight, bias)


def launch_fixed(x, conv_state, weight, bias):
    return _run("fixed", x, conv_state, weight, bias)


def make_inputs(*, device, gen, batch=3, dim=96, seqlen=1, width=4):
    x = torch.randn(batch, dim, seqlen, generator=gen)
    # (batch, dim, width - 1) with the feature dimension contiguous, as the mamba cache keeps it
    conv_state = torch.randn(batch, width - 1, dim, generator=gen).transpose(1, 2)
    weight = torch.randn(dim, width, generator=gen) * 0.5
    bias = torch.randn(dim, generator=gen) * 0.1
    return {"x": x.to(device), "conv_state": conv_state.to(device), "weight": weight.to(device),
            "bias": bias.to(device)}


def reference(x, conv_state, weight, bias):
    """Append the new tokens to the state window, convolve causally, keep the last
    width - 1 columns as the new state."""
    x, s, w, b = (t.to(torch.float64) for t in (x, conv_state, weight, bias))
    width = w.shape[1]
    seqlen = x.shape[-1]
    full = torch.cat([s, x], dim=-1)  # (batch, dim, width - 1 + seqlen)
    out = torch.stack([(full[..., t:t + width] * w).sum(-1) for t in range(seqlen)], dim=-1) + b[:, None]
    out = out * torch.sigmoid(out)
    new_state = full[..., -(width - 1):]
    return torch.cat([out.reshape(-1), new_state.reshape(-1)])


# width 2 to 4: causal_conv1d_update's kernel computes with KERNEL_WIDTH 2, 3 and 4 only (STEP 5 of
# _causal_conv1d_update_kernel in causal_conv1d_triton.py, still so in sglang 0.5.8; a width of 5
# loads a fourth state column it never uses), the widths of the CUDA causal_conv1d it ports
# ("causal_conv1d only supports width between 2 and 4") and of Mamba's d_conv (4)
FUZZ = {"batch": (1, 8), "dim": (1, 600), "seqlen": (1, 3), "width": (2, 4)}
