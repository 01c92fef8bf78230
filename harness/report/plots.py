"""The report's pictures, drawn with matplotlib (Agg) and saved as small PNGs.

- ``draw_error_map``: an error profile (``harness.core.profile``), as a line over the
  index (1-D) or an image (2-D).
- ``draw_scalar``: a wrong scalar against its reference.
- ``draw_spread``: the results of a flaky kernel over its runs.
- ``draw_summary``: what each detector caught, and its false alarms.
"""

from __future__ import annotations

import math

from harness.core.profile import LOG_INF, LOG_MIN, describe_profile


def _finite_or_nan(v) -> float:
    """A recorded number (a float, or "inf"/"nan" as strict JSON writes them) if finite, else NaN."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        return float("nan")
    return x if math.isfinite(x) else float("nan")


def _figure(width: float = 6.4, height: float = 2.5):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, height), dpi=80)
    return plt, fig, ax


def _save(plt, fig, path) -> None:
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=80)
    plt.close(fig)


def draw_error_map(prof: dict, title: str, path) -> None:
    import numpy as np

    plt, fig, ax = _figure()
    grid = np.array([[float(v) for v in row.split()] for row in prof["grid"]], dtype=float)
    shape = prof["shape"]
    if grid.shape[0] == 1:
        n = prof["n"]
        x = np.linspace(0, n, grid.shape[1] + 1)
        ratio = 10.0 ** grid[0]
        ax.fill_between(x[:-1], ratio, 10 ** LOG_MIN, step="post", color="#9bb7d4", lw=0)
        wrong = np.where(grid[0] > 0, ratio, np.nan)
        ax.fill_between(x[:-1], wrong, 10 ** LOG_MIN, step="post", color="#c0392b", lw=0)
        ax.axhline(1.0, color="black", lw=0.8, ls="--")
        ax.text(n, 1.0, " tolerance", va="bottom", ha="right", fontsize=7)
        ax.set_yscale("log")
        ax.set_ylim(10 ** LOG_MIN, 10 ** (LOG_INF + 0.5))
        ax.set_xlim(0, n)
        ax.set_xlabel("element index")
        ax.set_ylabel("error / tolerance")
    else:
        rows = int(np.prod(shape[:-1]))
        cols = shape[-1]
        from matplotlib.colors import TwoSlopeNorm

        im = ax.imshow(grid, aspect="auto", cmap="RdBu_r", interpolation="nearest",
                       norm=TwoSlopeNorm(vmin=LOG_MIN, vcenter=0.0, vmax=LOG_INF), extent=[0, cols, rows, 0])
        cb = fig.colorbar(im, ax=ax, pad=0.01)
        cb.set_label("log10(error / tol.)", fontsize=7)
        cb.ax.tick_params(labelsize=7)
        ax.set_xlabel("column")
        ax.set_ylabel("row" if len(shape) == 2 else "row (leading dims flattened)")
    ax.set_title(f"{title}\n{describe_profile(prof)}", fontsize=8)
    ax.tick_params(labelsize=7)
    _save(plt, fig, path)


def scalar_values(trials: list) -> tuple[list[float], float | None]:
    """The result of each scalar trial, and the reference (None when they are not numbers)."""
    vals, ref = [], None
    for t in trials:
        try:
            vals.append(float(t["result"]))
            ref = float(t["reference"])
        except (KeyError, TypeError, ValueError):
            return [], None
    return vals, ref


def draw_scalar(trials: list, title: str, path) -> None:
    vals, ref = scalar_values(trials)
    plt, fig, ax = _figure(height=1.9)
    distinct = sorted(set(vals))
    labels = ["reference"] + (["result" if len(distinct) == 1 else f"result {i + 1}" for i in range(len(distinct))])
    heights = [ref] + distinct
    colors = ["#5b8fb9"] + ["#c0392b"] * len(distinct)
    ax.barh(labels[::-1], heights[::-1], color=colors[::-1])
    for i, h in enumerate(heights[::-1]):
        ratio = f"  ×{h / ref:.4g}" if ref and i < len(heights) - 1 else ""
        ax.text(h, i, f" {h:.7g}{ratio}", va="center", fontsize=7)
    ax.set_xlim(min(0, *heights) * 1.1, max(0, *heights) * 1.45 or 1)
    ax.set_title(title, fontsize=8)
    ax.tick_params(labelsize=7)
    _save(plt, fig, path)


def draw_spread(trials: list, title: str, path) -> None:
    """Each run's result: scalars as result minus reference, tensors as their worst error."""
    vals, ref = scalar_values(trials) if all(t.get("n") == 1 for t in trials) else ([], None)
    plt, fig, ax = _figure()
    x = list(range(1, len(trials) + 1))
    distinct = len({t["fingerprint"] for t in trials})
    if vals and ref is not None:
        lo, hi = min(vals), max(vals)
        sub = f"{distinct} distinct results over {len(trials)} runs, from {lo:.7g} to {hi:.7g}"
        if hi > lo and not lo - 2 * (hi - lo) <= ref <= hi + 2 * (hi - lo):
            # the reference is far away: show the spread itself, and say where the reference is
            ax.scatter(x, vals, s=14, color="#c0392b", zorder=3)
            ax.set_ylabel("result", fontsize=8)
            ratio = f": the results are ×{lo / ref:.3g} to ×{hi / ref:.3g} of it" if ref else ""
            sub += f"\nthe reference, {ref:.7g}, is off the chart{ratio}"
        else:
            ax.scatter(x, [v - ref for v in vals], s=14, color="#c0392b", zorder=3)
            ax.axhline(0.0, color="black", lw=0.8, ls="--")
            ax.text(len(x) + 0.4, 0.0, "reference", fontsize=7, va="bottom", ha="right")
            ax.set_ylabel(f"result − {ref:.7g}", fontsize=8)
    else:
        errs = [_finite_or_nan(t.get("max_abs")) for t in trials]
        ax.scatter(x, errs, s=14, color="#c0392b", zorder=3)
        ax.set_ylabel("max abs error", fontsize=8)
        nb = [t["n_bad"] for t in trials]
        wrong = f"{nb[0]:,}" if min(nb) == max(nb) else f"{min(nb):,}–{max(nb):,}"
        sub = f"{distinct} distinct results over {len(trials)} runs; {wrong} elements wrong"
    ax.set_xlabel("run")
    ax.set_xlim(0.5, len(x) + 0.5)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_title(f"{title}\n{sub}", fontsize=8)
    ax.tick_params(labelsize=7)
    _save(plt, fig, path)


def draw_summary(rows: list[tuple[str, dict]], path) -> None:
    """One bar per (detector, backend): broken kernels caught / missed / not judged, and false alarms."""
    plt, fig, ax = _figure(width=7.5, height=0.28 * len(rows) + 1.0)
    fig.clf()
    left, right = fig.subplots(1, 2, sharey=True, gridspec_kw={"width_ratios": [3, 1.2]})
    labels = [r[0] for r in rows][::-1]
    sc = [r[1] for r in rows][::-1]
    y = range(len(rows))
    tp = [s["tp"] for s in sc]
    fn = [s["fn"] for s in sc]
    na = [s["na"] for s in sc]
    left.barh(y, tp, color="#27ae60", label="caught")
    left.barh(y, fn, left=tp, color="#d5d8dc", label="missed")
    left.barh(y, na, left=[a + b for a, b in zip(tp, fn)], color="#f4f6f7", edgecolor="#d5d8dc", lw=0.5,
              label="n/a, not run or stale")
    left.set_yticks(list(y), labels, fontsize=7)
    left.set_title("broken kernels", fontsize=8)
    left.legend(fontsize=6, loc="lower right", frameon=False)
    fp = [s["fp"] for s in sc]
    right.barh(y, fp, color="#c0392b")
    right.set_title("false alarms on fixed kernels", fontsize=8)
    right.set_xlim(0, max(2, *fp) * 1.2)
    for a in (left, right):
        a.tick_params(labelsize=7)
        a.xaxis.get_major_locator().set_params(integer=True)
    for i, v in enumerate(fp):
        if v:
            right.text(v, i, f" {v}", va="center", fontsize=7)
    _save(plt, fig, path)
