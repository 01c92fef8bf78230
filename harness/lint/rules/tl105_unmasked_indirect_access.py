"""TL105: an unmasked load or store at indices read by a masked load with no ``other=``."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import is_none, memory_ops, under_if

BAD = '''
import triton
import triton.language as tl

@triton.jit
def gather_kernel(idx_ptr, table_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    idx = tl.load(idx_ptr + offs, mask)
    tl.store(out_ptr + offs, tl.load(table_ptr + idx), mask)
'''

GOOD = BAD.replace("tl.load(table_ptr + idx)", "tl.load(table_ptr + idx, mask)")


@rule("TL105", "unmasked-indirect-access", cases=("add-missing-mask",), confidence=HIGH, bad=BAD, good=GOOD,
      preview=True,  # first runs: 2 of 4 hits right, under 70 % (docs/lint-rules.md); no case needs it by default
      summary="a tl.load/tl.store with no mask at indices that a masked tl.load with no other= read")
def check(module):
    """The masked lanes of the index load are undefined (no ``other=``), so the unmasked access through them
    goes to arbitrary addresses: an out-of-bounds read in every launch whose size is not a multiple of the
    block, even when a masked store later throws the values away (TorchInductor's gather, 2022). Give the
    dependent access the same mask, or the index load an in-bounds ``other=``."""
    for flow in flows(module):
        undefined = {id(c) for c, kind, _, mask in memory_ops(flow)
                     if kind == "load" and not is_none(mask) and arg(c, 2, "other") is None}
        if not undefined:
            continue
        stop = lambda n: flow.m.tl_call(n) in ("load", "where", "minimum", "maximum", "clamp")  # noqa: E731
        for call, kind, pointer, mask in memory_ops(flow):
            if not is_none(mask) or under_if(flow, call):
                continue
            source = next((n for n in flow.sources(pointer, stop) if id(n) in undefined), None)
            if source is not None:
                yield call, (f"tl.{kind} with no mask at indices loaded on line {source.lineno} by a masked tl.load "
                             f"with no other=: in the masked lanes the index is undefined and the address "
                             f"arbitrary; mask this access too (or give the index load other=0)")
