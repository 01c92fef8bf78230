"""Glue for torchao's MoE-training FP8 kernel triton_fp8_per_group_rowwise_scales (jagged
row-wise scales: one scale per row for each group of columns given by `offsets`), called
through torchao's own launcher (a torch.library custom op). The later version imports
torchao.utils for a PyTorch version check (stubbed here) and defines its kernels only where
torch.utils._triton.has_triton() says so, which needs a GPU: on a machine without one (the
interpreter's) that answer is "yes" for the import only."""

import torch

from harness.bugs.source import load

FP8 = torch.float8_e4m3fn
FP8_MAX = torch.finfo(FP8).max
EPS = 1e-12  # the module's clamp of the absmax
ROWS_PER_PROGRAM = 32  # the module's BLOCK_SIZE (its only autotune config)

STUBS = {"torchao.utils": {"torch_version_at_least": lambda version: True}}


def _load(variant):
    import torch.utils._triton as tt

    real = tt.has_triton
    if not real():
        tt.has_triton = lambda: True
    try:
        return load(__file__, variant, stubs=STUBS)
    finally:
        tt.has_triton = real


def _run(variant, x, offsets):
    mod = _load(variant)
    y, scales = mod.triton_fp8_per_group_rowwise_scales(x, offsets, FP8, False)
    # the scales only: Triton 3.7's interpreter rounds float32 -> float8_e4m3fn wrongly where
    # the rounding carries into the exponent, so the FP8 values are not compared there; a
    # wrapped offset shows in the scales (or faults)
    return scales


def launch_buggy(x, offsets):
    return _run("buggy", x, offsets)


def launch_fixed(x, offsets):
    return _run("fixed", x, offsets)


def make_inputs(*, device, gen, m=256, k=1024, groups=4):
    """x: (m, k) bf16 activations-gradient-like data; offsets: the end column of each of
    `groups` token groups (int32, as MoE training passes them). m is rounded up to a
    multiple of 32: for other m, every version up to today's also stores the scales of the
    last block's rows past m into the next group's first slots (an unfixed bug of its own,
    not this entry's)."""
    m = -(-m // ROWS_PER_PROGRAM) * ROWS_PER_PROGRAM
    groups = max(1, min(groups, k))
    x = torch.randn(m, k, generator=gen).to(torch.bfloat16)
    cuts = torch.sort(torch.randperm(k - 1, generator=gen)[: groups - 1] + 1).values
    offsets = torch.cat([cuts, torch.tensor([k])]).to(torch.int32)
    return {"x": x.to(device), "offsets": offsets.to(device)}


def reference(x, offsets):
    """scales[g * m + r] = 448 / max(amax of |x[r, start_g:end_g]|, EPS), the division in
    float64 and rounded to float32 as the kernel does; computed a slab of rows at a time."""
    m, k = x.shape
    ends = [int(e) for e in offsets.tolist()]
    out = torch.empty(len(ends), m, dtype=torch.float64, device=x.device)
    for r0 in range(0, m, 4096):
        slab = x[r0:r0 + 4096].abs()
        start = 0
        for g, end in enumerate(ends):
            amax = slab[:, start:end].amax(dim=1) if end > start else torch.zeros(slab.shape[0], dtype=slab.dtype,
                                                                                 device=x.device)
            out[g, r0:r0 + 4096] = (FP8_MAX / amax.double().clamp(min=EPS)).float().double()
            start = end
    return out.flatten()


FUZZ = {"m": (32, 512), "k": (8, 2048), "groups": (1, 8)}
