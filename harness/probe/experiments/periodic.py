"""The same random numbers in every block? For a kernel that draws random numbers (tl.rand,
tl.randn, tl.randint, philox), two blocks' worth of a size run with the inputs' second block a
copy of the first: when the result's second block is then a copy of its first too while the
reference's is not, every program drew the same numbers, from offsets local to its block
(``tl.arange(0, BLOCK)`` where the element's global index belongs): a dropout mask that repeats
block after block ("block-repeat")."""

from __future__ import annotations

import re

from harness.probe import execute as X
from harness.probe.context import fmt, int_sizes
from harness.probe.kernels import blocks as block_sizes
from harness.probe.experiments import Experiment, last_axis, outcome

RANDOM = re.compile(r"\b(rand|randn|randint|randint4x|philox)\s*\(")


def _halves(t, n: int):
    """The two halves of the last axis of length ``n`` of ``t``, or None."""
    if not hasattr(t, "shape") or n not in t.shape:
        return None
    dim = last_axis(t, n)
    return t.narrow(dim, 0, n // 2), t.narrow(dim, n // 2, n // 2)


def _tiled(inputs: dict, n: int) -> dict:
    """The inputs with each float tensor's second half (along a length-``n`` axis) a copy of its first."""
    import torch

    out = {}
    for k, t in inputs.items():
        if isinstance(t, torch.Tensor) and t.is_floating_point() and n in t.shape:
            t = X.same_layout(t)
            first, second = _halves(t, n)
            second.copy_(first)
        out[k] = t
    return out


def run(ctx, failing: dict) -> dict:
    import torch

    from harness.probe.kernels import jitted, kernel_source

    if not RANDOM.search(" ".join(kernel_source(k) for k in jitted(ctx.target))):
        return {}
    if outcome(ctx, failing)[0] != "wrong":
        return {}
    blocks = sorted({b for b in (block_sizes(ctx) or []) if isinstance(b, int) and b >= 2})
    for k, v in int_sizes(failing).items():
        for b in (b for b in blocks if b < v):
            if ctx.late():
                return {}
            sizes = {**failing, k: 2 * b}
            try:
                inputs = _tiled(X.make(ctx.target, sizes, ctx.seed, ctx.backend), 2 * b)
            except Exception:  # noqa: BLE001  make_inputs declined these sizes
                continue
            c = outcome(ctx, sizes, inputs)[1]
            out, ref = _halves(getattr(c, "out", None), 2 * b), _halves(getattr(c, "ref", None), 2 * b)
            if out is None or ref is None or out[0].shape != ref[0].shape:
                continue
            if torch.equal(out[0], out[1]) and not torch.allclose(ref[0].double(), ref[1].double()):
                return {"block-repeat": f"at {fmt(sizes)} with the inputs' second block of {b} a copy of the first, "
                                        f"the result's second block is a copy of its first and the reference's is "
                                        f"not: every program draws the same random numbers"}
    return {}


EXPERIMENT = Experiment("periodic", "the same random numbers in every block?", run, rank=5)
