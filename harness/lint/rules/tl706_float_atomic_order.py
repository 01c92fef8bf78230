"""TL706 (preview): a floating-point reduction across programs by tl.atomic_add: not reproducible."""

from __future__ import annotations

from harness.lint.flow import arg, flows
from harness.lint.registry import LOW, rule

BAD = '''
import triton
import triton.language as tl

@triton.jit
def nrm2_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sum(x * x))
'''

GOOD = BAD.replace("tl.atomic_add(out_ptr, tl.sum(x * x))", "tl.store(out_ptr + tl.program_id(0), tl.sum(x * x))")


@rule("TL706", "float-atomic-order", cases=("nrm2-atomic-order",), confidence=LOW, preview=True, bad=BAD,
      good=GOOD,
      summary="tl.atomic_add of a tl.sum of loaded values: the order of the adds, and so the last bits, vary")
def check(module):
    """Floating-point addition is not associative, and the order in which programs' atomics land changes
    from run to run: the sum differs in its last bits, so results are not bitwise reproducible. Write one
    partial per program and add them in a fixed order. Preview: correct, only not deterministic, and
    integer sums are exact (lint cannot see the dtype)."""
    for flow in flows(module):
        for call in flow.calls("atomic_add"):
            value = arg(call, 1, "val")
            if value is not None and any(flow.m.tl_call(n) == "sum" for n in flow.sources(value)):
                yield call, ("tl.atomic_add of a block's tl.sum: the programs' adds land in a different order each "
                             "run, so a floating-point result changes in its last bits; store per-program partials "
                             "and sum them in order where reproducibility matters")
