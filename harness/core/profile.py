"""Where a tensor output is wrong, in a form small enough for the recorded JSON.

``error_profile`` reduces a wrong output to a small grid (at most 32 x 256, each row a
string of numbers) of the worst error per bin (``compare.error_map``: error over
tolerance, > 1 is wrong) and the index ranges that were wrong. It goes into the
recorded JSON, so a report built on a machine without a GPU can still draw the GPU's
error map (``harness.report.plots``); ``describe_profile`` says it in one line.
"""

from __future__ import annotations

import math

LOG_MIN, LOG_INF = -4.0, 9.0  # log10(error / tolerance): "well within" and "NaN or infinite"
MAX_RANGES = 12


def _runs(mask) -> tuple[list[list[int]], int]:
    """The first MAX_RANGES [start, end) runs of True in a 1-D bool tensor, and how many there are."""
    import torch

    m = mask.reshape(-1).to(torch.int8)
    if not bool(m.any()):
        return [], 0
    edge = torch.diff(m, prepend=m.new_zeros(1), append=m.new_zeros(1))
    starts_mask, ends_mask = edge == 1, edge == -1
    n = int(starts_mask.sum())
    keep = starts_mask.cumsum(0) <= MAX_RANGES
    starts = torch.nonzero(starts_mask & keep).reshape(-1).tolist()
    ends = torch.nonzero(ends_mask & (ends_mask.cumsum(0) <= MAX_RANGES)).reshape(-1).tolist()
    return [[s, e] for s, e in zip(starts, ends)], n


def _pool_max(x, rows: int, cols: int):
    """Max-pool a 2-D tensor down to at most rows x cols."""
    import torch
    import torch.nn.functional as F

    r, c = x.shape
    kr, kc = max(1, math.ceil(r / rows)), max(1, math.ceil(c / cols))
    if kr == 1 and kc == 1:
        return x
    pad_r, pad_c = (-r) % kr, (-c) % kc
    x = F.pad(x, (0, pad_c, 0, pad_r), value=LOG_MIN)
    return x.reshape(x.shape[0] // kr, kr, x.shape[1] // kc, kc).amax(dim=(1, 3)).to(torch.float32)


def error_profile(out, ref, rtol: float, atol: float, rows: int = 32, cols: int = 256) -> dict | None:
    """A compact picture of where a tensor output is wrong; None for scalars or a shape mismatch."""
    import torch

    from harness.core.compare import error_map

    if ref.numel() <= 1 or out.numel() != ref.numel():
        return None
    e = error_map(out, ref, rtol, atol)
    e = torch.nan_to_num(e, nan=0.0)  # 0/0: exact match against a zero reference with atol = 0
    bad = e > 1
    grid = e.reshape(1, -1) if e.dim() <= 1 else e.reshape(-1, e.shape[-1])
    logs = torch.where(torch.isinf(grid), torch.full_like(grid, LOG_INF),
                       grid.clamp_min(10 ** LOG_MIN).log10().clamp(LOG_MIN, LOG_INF - 0.5))
    pooled = _pool_max(logs, rows if grid.shape[0] > 1 else 1, cols)
    ranges, n_ranges = _runs(bad)
    prof = {"shape": list(ref.shape), "n": int(ref.numel()), "n_bad": int(bad.sum()),
            "grid": [" ".join(f"{v:.1f}".removesuffix(".0") for v in row) for row in pooled.tolist()],
            "bad_ranges": ranges, "n_ranges": n_ranges}
    if grid.shape[0] > 1:
        b2 = bad.reshape(grid.shape)
        prof["bad_rows"], prof["n_bad_rows"] = _runs(b2.any(dim=1))
        prof["bad_cols"], prof["n_bad_cols"] = _runs(b2.any(dim=0))
    return prof


def _fmt_ranges(ranges: list, n: int, noun: str) -> str:
    parts = [f"{s}" if e - s == 1 else f"{s}–{e - 1}" for s, e in ranges[:4]]
    more = f" and {n - len(parts)} more runs" if n > len(parts) else ""
    return f"{noun} {', '.join(parts)}{more}" if parts else ""


def describe_profile(prof: dict) -> str:
    """One line: how many elements were wrong, and where."""
    head = f"{prof['n_bad']:,} of {prof['n']:,} elements wrong"
    if not prof["n_bad"]:
        return f"all {prof['n']:,} elements within tolerance"
    if prof["n_bad"] == prof["n"]:
        return f"every one of {prof['n']:,} elements wrong"
    if "bad_rows" in prof:
        rows = _fmt_ranges(prof["bad_rows"], prof["n_bad_rows"], "rows")
        cols = _fmt_ranges(prof["bad_cols"], prof["n_bad_cols"], "columns")
        return f"{head}: {rows}; {cols}"
    return f"{head}: {_fmt_ranges(prof['bad_ranges'], prof['n_ranges'], 'indices')}"
