"""Comparing one output with the reference, and fingerprinting it for determinism checks."""

from __future__ import annotations

import hashlib

import torch


def fingerprint(t: torch.Tensor) -> str:
    """A hash of the exact bytes, shape and dtype: equal fingerprints mean bitwise-equal results."""
    c = t.detach().to("cpu").contiguous()
    h = hashlib.sha1(f"{tuple(c.shape)}{c.dtype}".encode())
    h.update(c.view(torch.uint8).numpy().tobytes() if c.numel() else b"")
    return h.hexdigest()[:16]


def _fmt(v: float) -> str:
    return f"{v:.7g}"


def _index(flat: int, shape) -> str:
    if len(shape) <= 1:
        return f"[{flat}]"
    idx = []
    for s in reversed(shape):
        idx.append(flat % s)
        flat //= s
    return "[" + ",".join(str(i) for i in reversed(idx)) + "]"


def compare(out: torch.Tensor, ref: torch.Tensor, rtol: float, atol: float) -> dict:
    """Elementwise ``|out - ref| <= atol + rtol * |ref|``; NaN matches only NaN.

    Returns plain numbers and strings (it goes into JSON): whether all match, how
    many differ, the worst absolute and relative error, and short summaries.
    """
    o = out.detach().to("cpu", torch.float64).reshape(ref.shape) if out.numel() == ref.numel() else None
    r = ref.detach().to("cpu", torch.float64)
    if o is None:
        return {"close": False, "n": int(r.numel()), "n_bad": int(r.numel()), "max_abs": float("inf"),
                "max_rel": float("inf"), "nonfinite": 0, "first_bad": None,
                "result": f"shape {tuple(out.shape)}", "reference": f"shape {tuple(r.shape)}"}
    ok = torch.isclose(o, r, rtol=rtol, atol=atol, equal_nan=True)
    diff = (o - r).abs()
    both_nan = torch.isnan(o) & torch.isnan(r)
    diff = torch.where(both_nan, torch.zeros_like(diff), diff)
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    rel = diff / r.abs().clamp_min(atol if atol > 0 else torch.finfo(torch.float64).tiny)
    rel = torch.where(diff == 0, torch.zeros_like(rel), rel)
    n_bad = int((~ok).sum())
    nonfinite = int((~torch.isfinite(o) & torch.isfinite(r)).sum())
    res = {
        "close": n_bad == 0, "n": int(r.numel()), "n_bad": n_bad,
        "max_abs": float(diff.max()) if diff.numel() else 0.0,
        "max_rel": float(rel.max()) if rel.numel() else 0.0,
        "nonfinite": nonfinite, "first_bad": None,
    }
    if r.numel() == 1:
        res["result"], res["reference"] = _fmt(float(o.reshape(-1)[0])), _fmt(float(r.reshape(-1)[0]))
    elif n_bad:
        first = int((~ok).reshape(-1).nonzero()[0])
        res["first_bad"] = first
        at = _index(first, r.shape)
        res["result"] = f"{n_bad}/{r.numel()} differ, first {at}={_fmt(float(o.reshape(-1)[first]))}"
        res["reference"] = f"{at}={_fmt(float(r.reshape(-1)[first]))}"
    else:
        res["result"] = f"all {r.numel()} match"
        res["reference"] = f"shape {tuple(r.shape)}"
    return res


def error_map(out: torch.Tensor, ref: torch.Tensor, rtol: float, atol: float) -> torch.Tensor:
    """Per-element ``|out - ref| / (atol + rtol*|ref|)`` (>1 is wrong; inf where NaN mismatches)."""
    o = out.detach().to("cpu", torch.float64).reshape(ref.shape)
    r = ref.detach().to("cpu", torch.float64)
    diff = (o - r).abs()
    diff = torch.where(torch.isnan(o) & torch.isnan(r), torch.zeros_like(diff), diff)
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    return diff / (atol + rtol * r.abs())
