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

def complete(flow, total: ast.Call) -> bool:
    """``total`` (a ``tl.sum``) adds lanes read only at offsets no program or iteration walks block by block
    (no ``("tile", B)``): each program sums its whole extent, not a slice of one shared with other programs."""
    summed = arg(total, 0, "input")
    loads = [] if summed is None else [n for n in flow.sources(summed) if flow.m.tl_call(n) == "load"]
    return bool(loads) and not any(a[0] == "tile" for n in loads for a in flow.atoms(arg(n, 0, "pointer")))


NONLINEAR = {"sqrt", "sqrt_rn", "rsqrt", "log", "log2", "exp", "exp2", "pow", "abs"}


@rule("TL206", "nonlinear-partial-combine", cases=("nrm2-sqrt-per-block",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="tl.atomic_add of sqrt/log/exp/... of a block's tl.sum: the function of the sum is not the sum "
              "of the function")
def check(module):
    """An atomic add combines partials by addition, so what each program adds must be additive: sums of
    squares, not their square roots (the sum of norms is not the norm of the sum). Apply the function once,
    after the global sum. Quiet when every such sum is complete in its program: the lanes it adds were read
    at offsets that no program id or loop steps by the block (``row * stride + tl.arange(0, BLOCK)``, one
    program per row): the statistic is the row's own, and what is added over programs is a function of it
    per row, which addition combines rightly (RMSNorm's weight gradient)."""
    for flow in flows(module):
        for call in flow.calls("atomic_add"):
            value = arg(call, 1, "val")
            if value is None:
                continue
            for n in flow.sources(value, lambda n: flow.m.tl_call(n) in ("sum", "load")):
                name = flow.m.tl_call(n)
                sums = [s for s in flow.sources(n) if flow.m.tl_call(s) == "sum"]
                if name in NONLINEAR and sums and not all(complete(flow, s) for s in sums):
                    yield call, (f"atomic_add of tl.{name}(...) of this program's tl.sum: the programs' "
                                 f"tl.{name}s add up to something else than tl.{name} of the total; add the "
                                 f"partial sums and apply tl.{name} once, after")
                    break
