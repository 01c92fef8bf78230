"""TL206: a non-linear function of a block's partial reduction, combined across programs with an atomic add."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import HIGH, rule

BAD = '''
import triton
import triton.language as tl

@triton.jit
def nrm2_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(out_ptr, tl.sqrt(tl.sum(x * x)))
'''

GOOD = BAD.replace("tl.sqrt(tl.sum(x * x))", "tl.sum(x * x)")

NONLINEAR = {"sqrt", "sqrt_rn", "rsqrt", "log", "log2", "exp", "exp2", "pow", "abs"}


@rule("TL206", "nonlinear-partial-combine", cases=("nrm2-sqrt-per-block",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="tl.atomic_add of sqrt/log/exp/... of a block's tl.sum: the function of the sum is not the sum "
              "of the function")
def check(module):
    """An atomic add combines partials by addition, so what each program adds must be additive: sums of
    squares, not their square roots (the sum of norms is not the norm of the sum). Apply the function once,
    after the global sum."""
    for flow in flows(module):
        for call in flow.calls("atomic_add"):
            value = arg(call, 1, "val")
            if value is None:
                continue
            for n in flow.sources(value, lambda n: flow.m.tl_call(n) in ("sum", "load")):
                name = flow.m.tl_call(n)
                if name in NONLINEAR and any(flow.m.tl_call(s) == "sum" for s in flow.sources(n)):
                    yield call, (f"atomic_add of tl.{name}(...) of this program's tl.sum: the programs' "
                                 f"tl.{name}s add up to something else than tl.{name} of the total; add the "
                                 f"partial sums and apply tl.{name} once, after")
                    break
