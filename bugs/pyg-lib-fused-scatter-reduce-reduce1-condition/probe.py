"""A reproduction of pyg-lib's fused scatter-reduce (pyg_lib/ops/scatter_reduce.py,
https://github.com/pyg-team/pyg-lib/pull/638): our own kernel with the released one's mechanism
(per-slot atomic sum/mean/min/max of each element into its group's row, slots unrolled, 256
elements a program) and launcher (fill values, mean's division by the degree, +-inf turned to
0). Buggy: the second slot's min/max branches test the third and fourth slots' codes, as released.
"""

import torch
import triton
import triton.language as tl

NAMES = ["none", "sum", "mean", "min", "max"]


@triton.jit
def _reduce_into(out_ptr, offs, x, mask, CODE: tl.constexpr):
    if CODE == 1 or CODE == 2:  # sum, mean
        tl.atomic_add(out_ptr + offs, x, mask=mask)
    elif CODE == 3:
        tl.atomic_min(out_ptr + offs, x, mask=mask)
    elif CODE == 4:
        tl.atomic_max(out_ptr + offs, x, mask=mask)


@triton.jit
def _fused_scatter(x_ptr, index_ptr, out_ptr, num_feats, num_reductions, numel,
                   R0: tl.constexpr, R1: tl.constexpr, R2: tl.constexpr, R3: tl.constexpr,
                   SLOT1_AS_RELEASED: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < numel
    x = tl.load(x_ptr + offs, mask=mask)
    group = tl.load(index_ptr + offs // num_feats, mask=mask)
    row = group * (num_feats * num_reductions) + offs % num_feats
    if R0 > 0:
        _reduce_into(out_ptr, row, x, mask, R0)
    if R1 > 0:
        if SLOT1_AS_RELEASED:
            if R1 == 1 or R1 == 2:
                tl.atomic_add(out_ptr + row + num_feats, x, mask=mask)
            elif R2 == 3:  # BUG: the released condition tests the third slot's code
                tl.atomic_min(out_ptr + row + num_feats, x, mask=mask)
            elif R3 == 4:  # BUG: and the fourth's
                tl.atomic_max(out_ptr + row + num_feats, x, mask=mask)
        else:
            _reduce_into(out_ptr, row + num_feats, x, mask, R1)
    if R2 > 0:
        _reduce_into(out_ptr, row + 2 * num_feats, x, mask, R2)
    if R3 > 0:
        _reduce_into(out_ptr, row + 3 * num_feats, x, mask, R3)


def _launch(x, index, dim_size, codes, as_released):
    names = [NAMES[c] for c in codes.tolist() if c > 0]
    assert len(set(names)) == len(names), "each reduction at most once"
    feats = x.shape[1]
    out = x.new_empty(int(dim_size), len(names) * feats)
    for i, name in enumerate(names):
        out[:, i * feats:(i + 1) * feats] = {"min": float("inf"), "max": float("-inf")}.get(name, 0.0)
    slots = [NAMES.index(n) for n in names] + [0] * (4 - len(names))
    grid = (triton.cdiv(x.numel(), 256),)
    _fused_scatter[grid](x, index, out, feats, len(names), x.numel(), R0=slots[0], R1=slots[1], R2=slots[2],
                         R3=slots[3], SLOT1_AS_RELEASED=as_released, BLOCK_SIZE=256)
    for i, name in enumerate(names):
        part = out[:, i * feats:(i + 1) * feats]
        if name == "mean":
            degree = x.new_zeros(int(dim_size)).scatter_add_(0, index, x.new_ones(index.numel())).clamp_(min=1.0)
            part /= degree.view(-1, 1)
        elif name in ("min", "max"):
            part[part.abs() == float("inf")] = 0.0
    return out


def launch_buggy(x, index, dim_size, codes):
    return _launch(x, index, dim_size, codes, True)


def launch_fixed(x, index, dim_size, codes):
    return _launch(x, index, dim_size, codes, False)


def make_inputs(*, device, gen, rows=5, feats=4, groups=2, r0=1, r1=2, r2=4, r3=0):
    """x [rows, feats], a group index in [0, groups), and the reductions as the kernel's codes
    (0 none, 1 sum, 2 mean, 3 min, 4 max, taken modulo 5; upstream's test: sum, mean, max)."""
    x = torch.randn(rows, feats, generator=gen)
    index = torch.randint(0, groups, (rows,), generator=gen)
    return {"x": x.to(device), "index": index.to(device), "dim_size": torch.tensor(groups),
            "codes": torch.tensor([r0, r1, r2, r3]) % len(NAMES)}


def reference(x, index, dim_size, codes):
    outs = []
    for c in codes.tolist():
        if c == 0:
            continue
        name = NAMES[c]
        base = x.new_zeros(int(dim_size), x.shape[1])
        red = {"sum": "sum", "mean": "mean", "min": "amin", "max": "amax"}[name]
        idx = index.view(-1, 1).expand_as(x)
        outs.append(base.scatter_reduce(0, idx, x, reduce=red, include_self=False))
    return torch.cat(outs, dim=1)


FUZZ = {"rows": (1, 50000), "feats": (1, 128), "groups": (1, 1000)}
