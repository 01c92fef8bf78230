"""TL705 (preview): a store to data-dependent addresses that may repeat."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import LOW, rule
from harness.lint.rules._common import memory_ops

BAD = '''
import triton
import triton.language as tl

@triton.jit
def last_position_kernel(ids_ptr, last_ptr, n, BLOCK: tl.constexpr):
    pos = tl.arange(0, BLOCK)
    ids = tl.load(ids_ptr + pos, mask=pos < n, other=0)
    tl.store(last_ptr + ids, pos, mask=pos < n)
'''

GOOD = BAD.replace("tl.store(last_ptr + ids, pos, mask=pos < n)", "tl.atomic_max(last_ptr + ids, pos, mask=pos < n)")


@rule("TL705", "duplicate-index-store", cases=("duplicate-index-store",), confidence=LOW, preview=True, bad=BAD,
      good=GOOD,
      summary="tl.store of positions (tl.arange) to addresses computed from loaded indices")
def check(module):
    """When two lanes hold the same index, which lane's store lands is unspecified: 'the last position of each
    id' written as a scatter keeps an arbitrary one. ``tl.atomic_max`` keeps the largest. Preview: a scatter
    through a permutation (unique indices) is correct and looks the same."""
    for flow in flows(module):
        for call, kind, pointer, _ in memory_ops(flow):
            value = arg(call, 1, "value")
            if kind == "store" and value is not None and any(a[0] == "load" for a in flow.atoms(pointer)) and \
                    any(a[0] in ("arange", "tile") for a in flow.atoms(value)) and \
                    not any(a[0] == "load" for a in flow.atoms(value)):
                yield call, (f"stores positions to {ast.unparse(pointer)}, addresses read from memory: where two lanes "
                             f"hold the same index, which store lands is unspecified; use tl.atomic_max/atomic_min")
