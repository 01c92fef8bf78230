"""TL707 (preview): TL704's load, update and store at loaded indices, when the update is other data."""

from __future__ import annotations

from harness.lint.registry import LOW, rule
from harness.lint.rules._twins import SCATTER_COUNT as COUNT, is_count, scatter_updates

BAD = COUNT.replace("    bins = tl.load(x_ptr + offs, mask=mask, other=0)\n",
                    "    bins = tl.load(x_ptr + offs, mask=mask, other=0)\n    w = tl.load(w_ptr + offs, mask=mask, other=0)\n"
                    ).replace("counts + 1", "counts + w").replace("hist_ptr, n,", "hist_ptr, w_ptr, n,")

GOOD = BAD.replace("""    counts = tl.load(hist_ptr + bins, mask=mask)
    tl.store(hist_ptr + bins, counts + w, mask=mask)""", "    tl.atomic_add(hist_ptr + bins, w, mask=mask)")


@rule("TL707", "scatter-update-of-data", cases=("histogram-lost-updates",), confidence=LOW, preview=True,
      bad=BAD, good=GOOD,
      summary="tl.load and tl.store of the same address computed from loaded indices, the stored value the loaded "
              "one updated with other data (out[idx] += src written as load, add, store)")
def check(module):
    """The same lost updates as TL704 when two lanes or programs hold the same index. Preview: an index-add,
    a scatter of rows to a permutation or one state slot per request is correct because its indices are
    unique, which the API promises and lint cannot see (in sglang and xformers every such hit was unique)."""
    for flow, call, pointer, load in scatter_updates(module):
        if not is_count(flow, call, load):
            yield call, (f"{pointer} is loaded (line {load.lineno}), updated and stored back at indices read from "
                         f"memory: unless the indices are unique, lanes and programs with the same index lose each "
                         f"other's updates; use tl.atomic_add")
