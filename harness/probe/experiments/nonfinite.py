"""Where does a NaN or Inf come from? Three runs tell the usual sources apart:

- the inputs hold NaN or Inf (unwritten cache slots, a row of NaN logits past a length) and
  the kernel is wrong with them, right once they are replaced by 0, which the reference does
  not notice: "nonfinite-input", values the kernel should have kept out of the result got in
  (whether or not the wrong result is itself finite: an argmax can pick a padded lane);
- the same, but the reference's result changes when they are 0: the reference gives them a
  meaning (an empty segment's -inf log-sum-exp) that the kernel does not handle:
  "special-value", a degenerate input;

and where the kernel gives NaN or Inf where the float64 reference is finite and the inputs
hold none:
- the same inputs with every exact 0.0 moved off zero give a finite, right result: the NaN
  is 0/0 or 0 * log 0 from zeros ("zero-input": a row of zeros, zeros in padded lanes);
- the float inputs scaled down by 16 give a right result: an intermediate overflows at
  these magnitudes ("magnitude": exp of a large logit, a square past the dtype's range).
"""

from __future__ import annotations

from harness.probe import execute as X
from harness.probe.context import fmt
from harness.probe.experiments import Experiment, outcome


def _floats(inputs: dict) -> list[str]:
    import torch

    return [k for k, v in inputs.items() if isinstance(v, torch.Tensor) and v.is_floating_point() and v.numel()]


def _same(a, b) -> bool:
    import torch

    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.shape != b.shape:
        return False
    return bool(torch.equal(torch.nan_to_num(a.double(), nan=7.0), torch.nan_to_num(b.double(), nan=7.0)))


def run(ctx, failing: dict) -> dict:
    import torch

    state, c = outcome(ctx, failing)
    if state != "wrong" or c is None or c.out is None or c.ref is None or not hasattr(c.out, "shape") \
            or c.out.shape != c.ref.shape:
        return {}
    inputs = X.make(ctx.target, failing, ctx.seed, ctx.backend)
    floats = _floats(inputs)
    held = [k for k in floats if not bool(torch.isfinite(inputs[k]).all())]
    if held:
        cleaned = {k: torch.nan_to_num(v, nan=0.0, posinf=0.0, neginf=0.0) if k in held else v
                   for k, v in inputs.items()}
        state, clean = outcome(ctx, failing, cleaned)
        if state != "right":
            return {}
        which = f"the NaN/Inf that {', '.join(map(repr, held))} hold{'s' if len(held) == 1 else ''}"
        if not _same(clean.ref, c.ref):  # the reference reads them: a value with a meaning, mishandled
            return {"special-value": f"wrong at {fmt(failing)} with {which}, which the reference gives a meaning "
                                     f"(its result changes when they are 0: an empty segment's -inf, say); the "
                                     f"kernel does not handle them"}
        return {"nonfinite-input": f"wrong at {fmt(failing)} with {which}; right once they are replaced by 0, "
                                   f"which the reference does not notice: values the result should not depend "
                                   f"on get in"}
    out, ref = c.out.double(), c.ref.double()
    bad = ~torch.isfinite(out) & torch.isfinite(ref)
    if not bool(bad.any()):
        return {}
    n = int(bad.sum())
    zeros = [k for k in floats if bool((inputs[k] == 0).any())]
    if zeros and not ctx.late():
        gen = torch.Generator().manual_seed(ctx.seed + 1)
        moved = {}
        for k, v in inputs.items():
            if k in zeros:
                r = torch.rand(v.shape, generator=gen).to(v.dtype).to(v.device) * 0.5 + 0.5
                v = torch.where(v == 0, r, v)
            moved[k] = v
        if outcome(ctx, failing, moved)[0] == "right":
            return {"zero-input": f"{n} NaN/Inf in the result at {fmt(failing)}; finite and right once the exact "
                                  f"zeros in {', '.join(map(repr, zeros))} are moved off 0 (0/0, 0 * log 0)"}
    if not ctx.late():
        scaled = {k: v / 16 if k in floats else v for k, v in inputs.items()}
        if outcome(ctx, failing, scaled)[0] == "right":
            return {"magnitude": f"{n} NaN/Inf in the result at {fmt(failing)}; right with the float inputs "
                                 f"scaled down by 16: an intermediate overflows at these magnitudes"}
    return {}


EXPERIMENT = Experiment("nonfinite", "where does a NaN or Inf come from: the inputs, zeros, or magnitudes?", run,
                        rank=1)
