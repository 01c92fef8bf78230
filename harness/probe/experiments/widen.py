"""Too narrow a float type? The failing sizes run once more with every float tensor one type
wider (fp16 and bf16 to fp32, fp32 to fp64), the same values: a kernel whose arithmetic follows
its operands' type then rounds, stores or accumulates in the wider one, and right there means
the narrow type's precision or range is the error ("wider-dtype"). Then the longest size cut to
a quarter (or a sixteenth) in the narrow type, right there, while at the failing size the inputs
with their largest tenth clipped (each float tensor to its 90th percentile magnitude) are still
wrong: the error builds up along that size ("length"), a running sum rounded or overflowing as
it grows (an fp16 accumulator past 65504, a bf16 sum rounded chunk after chunk), not one
operation on a few large values out of range (exp of the largest logit), which fewer values
would merely be less likely to hold."""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import fmt, int_sizes
from harness.probe.experiments import Experiment, outcome


def _wider(inputs: dict) -> tuple[dict, list]:
    """The inputs with each float tensor one type wider, in its own layout; the names widened."""
    import torch

    step = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.float32: torch.float64}
    out, names = {}, []
    for k, v in inputs.items():
        if isinstance(v, torch.Tensor) and v.dtype in step and v.numel():
            try:  # the strides and gaps of the given layout kept
                w = torch.empty_strided(v.size(), v.stride(), dtype=step[v.dtype], device=v.device)
                v = w.copy_(v)
            except RuntimeError:  # overlapping strides
                v = v.to(step[v.dtype])
            names.append(f"'{k}' ({str(inputs[k].dtype).replace('torch.', '')})")
        out[k] = v
    return out, names


def _clipped(inputs: dict) -> dict:
    """The inputs with each finite float tensor clamped to its 90th percentile magnitude."""
    import torch

    out = {}
    for k, v in inputs.items():
        if isinstance(v, torch.Tensor) and v.is_floating_point() and v.numel() and bool(torch.isfinite(v).all()):
            mag = v.detach().abs().reshape(-1).float()
            mag = mag[:: max(1, mag.numel() // 100_000)]  # a sample: quantile refuses huge tensors
            q = float(torch.quantile(mag, 0.9))
            v = X.same_layout(v)
            v.clamp_(-q, q)
        out[k] = v
    return out


def _length(ctx, failing: dict) -> str | None:
    """Where the error builds up along the longest size (see the module's docstring): why, or None."""
    sizes = {k: v for k, v in int_sizes(failing).items() if v >= 4}
    if not sizes:
        return None
    k = max(sizes, key=sizes.get)
    shorter = next((s for s in (sizes[k] // 4, sizes[k] // 16) if s >= 1 and not ctx.late()
                    and outcome(ctx, {**failing, k: s})[0] == "right"), None)
    if shorter is None or ctx.late():
        return None
    if outcome(ctx, failing, _clipped(X.make(ctx.target, failing, ctx.seed, ctx.backend)))[0] != "wrong":
        return None  # a few large values did it
    return f"wrong at {k}={sizes[k]}, right at {k}={shorter} in the same types, and still wrong at {k}={sizes[k]} " \
           f"with the largest tenth of the input values clipped: the error builds up along {k}"


def run(ctx, failing: dict) -> dict:
    if outcome(ctx, failing)[0] != "wrong" or ctx.late():
        return {}
    try:
        wide, names = _wider(X.make(ctx.target, failing, ctx.seed, ctx.backend))
    except Exception:  # noqa: BLE001  make_inputs declined these sizes
        return {}
    if not names or outcome(ctx, failing, wide)[0] != "right":
        return {}
    ev = {"wider-dtype": f"wrong at {fmt(failing)}; right with {', '.join(names[:3])} one float type wider, the "
                         f"same values: the narrow type's rounding or range is the error"}
    if (why := _length(ctx, failing)) is not None:
        ev["length"] = why
    return ev


EXPERIMENT = Experiment("widen", "right with the float tensors one type wider, and at a shorter length?", run,
                        rank=3)
