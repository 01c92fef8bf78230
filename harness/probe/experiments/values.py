"""How wrong, and where: the wrong result at the failing sizes looked at element by element.

- every wrong element a whole multiple k >= 2 of the reference: "accumulated" (added k times:
  autotune's benchmarking runs, a buffer never zeroed);
- close but outside the tolerance (relative error under 5%), and is the error larger at a
  larger size: "small-error", "error-grows" (accumulation precision);
- most elements wrong: "wrong-everywhere";
- the wrong elements all one sentinel value (-1, or 2**30 and past) where the reference varies:
  "fill-kept" (never written: the -1 a table is filled with).
"""

from __future__ import annotations

from harness.probe.budget import VALUES_RUN_S
from harness.probe.context import fill_kept, fmt, int_sizes
from harness.probe.experiments import Experiment, outcome


def _rel(c) -> float:
    ref = c.ref.reshape(-1).double()
    scale = float(ref.abs().max()) if ref.numel() else 0.0
    return c.cmp["max_abs"] / scale if scale else float("inf")


def _factor(out, ref, wrong) -> int | None:
    """k >= 2 when the wrong elements are all k times the reference (to the output's precision)."""
    nz = wrong & (ref.abs() > 1e-6)
    if int(nz.sum()) < 4:  # one ratio is just a number: a common factor needs several elements
        return None
    ratio = out[nz] / ref[nz]
    k = float(ratio.median())
    tol = max(0.02, 0.02 * k)  # a low-precision output (or atomics adding in it) rounds: k to its precision
    if k >= 1.5 and abs(k - round(k)) < tol and bool(((ratio - k).abs() < 2 * tol).float().mean() > 0.9):
        return round(k)
    return None


def _at_defaults(ctx, failing: dict) -> dict:
    """The common factor and a kept fill at the default sizes, run as a fresh process's first
    call (autotune tunes there, as it did for the reference detector), where the failing sizes
    have too few wrong elements to show either."""
    import torch

    from harness.probe import execute as X
    from harness.run.triton_compat import reset_autotune_caches

    if failing == ctx.target.sizes or ctx.late():
        return {}
    reset_autotune_caches(ctx.target.kernel)
    state, c = outcome(ctx, dict(ctx.target.sizes), X.make(ctx.target, ctx.target.sizes, ctx.seed, ctx.backend))
    if state != "wrong" or c is None or c.out is None or c.out.shape != c.ref.shape:
        return {}
    out, ref = c.out.reshape(-1).double(), c.ref.reshape(-1).double()
    wrong = ~torch.isclose(out, ref, rtol=1e-3, atol=1e-6, equal_nan=True)
    ev = fill_kept(out, ref, wrong, ctx.target.sizes)
    if (k := _factor(out, ref, wrong)) is not None:
        ev["accumulated"] = f"at the default sizes the wrong elements are {k}x the reference: added {k} times"
    return ev


def _uninitialized(inputs: dict, c, out, ref) -> dict:
    """The result is the reference plus what the input it is written into held before the call."""
    import torch

    before = inputs.get(c.returned) if c.returned else None
    if not (isinstance(before, torch.Tensor) and before.numel() == out.numel() and bool((before != 0).any())):
        return {}
    extra, held = out - ref, before.reshape(-1).double().to(out.device)  # the result is compared on the host
    on = held != 0
    if bool(torch.isclose(extra[on], held[on], rtol=1e-2, atol=1e-6 * max(1.0, float(ref.abs().max()))).all()):
        return {"uninitialized": f"the result is the reference plus what '{c.returned}' held before the call: the "
                                 f"kernel adds into its output without zeroing it first"}
    return {}


def run(ctx, failing: dict) -> dict:
    import torch

    from harness.probe import execute as X

    try:  # the inputs as make_inputs gives them, before any call: what an output added into held
        inputs = X.make(ctx.target, failing, ctx.seed, ctx.backend)
    except Exception:  # noqa: BLE001  make_inputs declined these sizes
        return {}
    state, c = outcome(ctx, failing)  # the failing sizes' shared run (of inputs made the same way)
    took = c.seconds if c is not None else 0.0
    if state != "wrong" or c is None or c.out is None or c.out.shape != c.ref.shape:
        return _at_defaults(ctx, failing) if state == "right" else {}  # wrong there by a stray store alone
    out, ref = c.out.reshape(-1).double(), c.ref.reshape(-1).double()
    ev = {}
    ev.update(_uninitialized(inputs, c, out, ref))
    wrong = ~torch.isclose(out, ref, rtol=1e-3, atol=1e-6, equal_nan=True)
    n = int(wrong.sum())
    if n == 0 and not c.cmp.get("n_bad"):
        return {}
    bad = c.cmp.get("n_bad", n)  # by the probe's own tolerance for this dtype and magnitude
    ev.update(fill_kept(out, ref, wrong, failing))
    if bad and bool(torch.isfinite(out).all()):
        ev["wrong-values"] = f"{bad} of {out.numel()} elements wrong (finite) at {fmt(failing)}"
    if bad > 0.5 * out.numel():
        ev["wrong-everywhere"] = f"{bad} of {out.numel()} elements wrong at {fmt(failing)}"
    if (k := _factor(out, ref, wrong)) is not None:
        ev["accumulated"] = f"the wrong elements are {k}x the reference: added {k} times"
    elif n < 4:  # too few wrong elements here to see a common factor or a kept fill
        ev = {**_at_defaults(ctx, failing), **ev}
    if torch.isfinite(out).all():
        rel = _rel(c)
        if rel < 0.05:
            ev["small-error"] = f"relative error {rel:.2g} at {fmt(failing)}"
            sizes = int_sizes(failing)
            if sizes and not ctx.late() and took < VALUES_RUN_S:  # a 4x larger run must stay short
                k = max(sizes, key=sizes.get)
                bigger = {**failing, k: sizes[k] * 4}
                s2, c2 = outcome(ctx, bigger)
                grew = _rel(c2) if s2 in ("right", "wrong") and c2 is not None and c2.cmp else 0.0
                # rounding grows at most about linearly with the length (4x here); a jump past that, or
                # out of the small range, is a wrong result that depends on the size, not precision
                if 1.5 * rel < grew < min(0.05, 8 * rel):
                    ev["error-grows"] = f"relative error {rel:.2g} at {k}={sizes[k]}, {_rel(c2):.2g} at " \
                                        f"{k}={sizes[k] * 4}"
    return ev


EXPERIMENT = Experiment("values", "how wrong, and where?", run, rank=2)
