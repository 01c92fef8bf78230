"""TL704: a load, an update and a store at data-dependent addresses, not atomic."""

from __future__ import annotations

from harness.lint.registry import MEDIUM, rule
from harness.lint.rules._twins import SCATTER_COUNT, is_count, scatter_updates

BAD = SCATTER_COUNT

GOOD = BAD.replace("""    counts = tl.load(hist_ptr + bins, mask=mask)
    tl.store(hist_ptr + bins, counts + 1, mask=mask)""", "    tl.atomic_add(hist_ptr + bins, 1, mask=mask)")


@rule("TL704", "scatter-read-modify-write", cases=("histogram-lost-updates",), confidence=MEDIUM, bad=BAD,
      good=GOOD,
      summary="tl.load and tl.store of the same address computed from loaded indices, the stored value the loaded "
              "one plus a number (hist[idx] += 1 written as load, add, store)")
def check(module):
    """Indices loaded from data repeat: lanes with the same index all load the same old value and all store
    ``old + 1``, and other programs race on the same addresses. One ``tl.atomic_add(ptr + idx, 1)`` per
    lane loses nothing. Fires only for a block of indices (loaded at ``tl.arange`` offsets) and a count: the
    stored value is the loaded one changed by a number or a scalar argument, the same for every lane, which
    is worth counting only because the indices repeat. An update by other data (``out[idx] += src``,
    an index-add, a state slot per request) is TL707, a preview rule: an API that promises unique indices
    (xformers' scaled_index_add says so) makes it correct, and lint cannot see the promise."""
    for flow, call, pointer, load in scatter_updates(module):
        if is_count(flow, call, load):
            yield call, (f"{pointer} is loaded (line {load.lineno}), counted and stored back at indices read from "
                         f"memory: lanes and programs with the same index lose each other's updates; use "
                         f"tl.atomic_add")
