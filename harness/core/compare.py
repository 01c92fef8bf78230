"""Comparing one output with the reference, and fingerprinting it for determinism checks,
on the device the output is on: only a few numbers come back to the host."""

from __future__ import annotations

import hashlib

import torch


_K = (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0x2545F4914F6CDD1D)


def _signed(k: int) -> int:
    return k - (1 << 64) if k >= 1 << 63 else k


def fingerprint(t: torch.Tensor) -> str:
    """A hash of the exact bytes, shape and dtype: equal fingerprints mean bitwise-equal results.

    Computed where the tensor is (on the GPU, no copy to the host): the bytes as 64-bit
    words, each multiplied by a different odd weight of its position, summed with
    wrap-around in two independent ways. Integer sums are exact in any order, so the
    hash itself is deterministic; a change of any bit, or a swap of two words, changes it.
    """
    c = t.detach().contiguous().reshape(-1)
    head = hashlib.sha1(f"{tuple(t.shape)}{t.dtype}".encode()).hexdigest()[:8]
    if not c.numel():
        return head
    b = c.view(torch.uint8)
    if b.numel() % 8:
        b = torch.cat([b, b.new_zeros(8 - b.numel() % 8)])
    w = b.view(torch.int64)
    i = torch.arange(w.numel(), device=w.device, dtype=torch.int64)
    h1 = (w * (i * _signed(_K[0]) + _signed(_K[1]) | 1)).sum()
    h2 = ((w ^ (i * _signed(_K[2]))) * _signed(_K[3])).sum()
    return f"{head}{int(h1) & (2**64 - 1):016x}{int(h2) & (2**64 - 1):016x}"


def _fmt(v: float) -> str:
    return f"{v:.7g}"


def element_index(flat: int, shape) -> str:
    if len(shape) <= 1:
        return f"[{flat}]"
    idx = []
    for s in reversed(shape):
        idx.append(flat % s)
        flat //= s
    return "[" + ",".join(str(i) for i in reversed(idx)) + "]"


def compare(out: torch.Tensor, ref: torch.Tensor, rtol: float, atol: float, allow: torch.Tensor | None = None) -> dict:
    """Elementwise ``|out - ref| <= atol + rtol * |ref| (+ allow)``; NaN matches only NaN.
    ``allow``: a further absolute error each element may have (the probe's error floor,
    ``harness.probe.floor``), of ``ref``'s shape; with it the result says ``floor``, its largest.

    Returns plain numbers and strings (it goes into JSON): whether all match, how
    many differ, the worst absolute and relative error, and short summaries.
    """
    # float64 where the output already is (on the GPU): only the few numbers below cross to the host
    r = ref.detach().to(out.device, torch.float64)
    o = out.detach().to(torch.float64).reshape(ref.shape) if out.numel() == ref.numel() else None
    if o is None:
        return {"close": False, "n": int(r.numel()), "n_bad": int(r.numel()), "max_abs": float("inf"),
                "max_rel": float("inf"), "nonfinite": 0, "first_bad": None,
                "result": f"shape {tuple(out.shape)}", "reference": f"shape {tuple(r.shape)}"}
    ok = torch.isclose(o, r, rtol=rtol, atol=atol, equal_nan=True)
    diff = (o - r).abs()
    both_nan = torch.isnan(o) & torch.isnan(r)
    diff = torch.where(both_nan, torch.zeros_like(diff), diff)
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    if allow is not None:
        allow = allow.to(o.device, torch.float64).reshape(r.shape)
        ok = ok | (diff <= atol + rtol * r.abs() + allow)
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
    if allow is not None:
        res["floor"] = float(allow.max()) if allow.numel() else 0.0
    if r.numel() == 1:
        res["result"], res["reference"] = _fmt(float(o.reshape(-1)[0])), _fmt(float(r.reshape(-1)[0]))
    elif n_bad:
        first = int((~ok).reshape(-1).nonzero()[0])
        res["first_bad"] = first
        at = element_index(first, r.shape)
        res["result"] = f"{n_bad}/{r.numel()} differ, first {at}={_fmt(float(o.reshape(-1)[first]))}"
        res["reference"] = f"{at}={_fmt(float(r.reshape(-1)[first]))}"
    else:
        res["result"] = f"all {r.numel()} match"
        res["reference"] = f"shape {tuple(r.shape)}"
    return res


def error_map(out: torch.Tensor, ref: torch.Tensor, rtol: float, atol: float) -> torch.Tensor:
    """Per-element ``|out - ref| / (atol + rtol*|ref|)`` (>1 is wrong; inf where NaN mismatches)."""
    r = ref.detach().to(out.device, torch.float64)
    o = out.detach().to(torch.float64).reshape(ref.shape)
    diff = (o - r).abs()
    diff = torch.where(torch.isnan(o) & torch.isnan(r), torch.zeros_like(diff), diff)
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    return diff / (atol + rtol * r.abs())
