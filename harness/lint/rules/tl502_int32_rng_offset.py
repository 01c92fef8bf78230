"""TL502: a random-number offset built from a program id times a runtime size, in int32."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import MEDIUM, rule
from harness.lint.rules._common import int32_products
from harness.lint.rules._twins import RNG

BAD = '''
import triton
import triton.language as tl

@triton.jit
def dropout_kernel(x_ptr, out_ptr, n_cols, p, seed, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
    r = tl.rand(seed, row * n_cols + cols)
    tl.store(out_ptr + row * n_cols + cols, tl.where(r > p, x / (1 - p), 0.0), mask=cols < n_cols)
'''

GOOD = BAD.replace("tl.rand(seed, row * n_cols + cols)", "tl.rand(seed, row.to(tl.int64) * n_cols + cols)")


@rule("TL502", "int32-rng-offset", cases=("rng-offset-overflow",), confidence=MEDIUM, bad=BAD, good=GOOD,
      summary="tl.rand/tl.randn/tl.randint offset computed as program id times a runtime size in int32")
def check(module):
    """Philox takes a 64-bit counter, but an int32 offset (``row * n_cols``) wraps past 2**31 and the
    stream repeats: the dropout mask of late rows equals that of early ones. Cast the row to tl.int64
    before the multiply."""
    for flow in flows(module):
        for call in flow.calls(*RNG):
            offset = arg(call, 1, "offset")
            for n in int32_products(flow, offset) if offset is not None else ():
                yield n, (f"the random offset {ast.unparse(n)} is an int32 product of a program id: past 2**31 it "
                          f"wraps and earlier random numbers repeat; cast to tl.int64 before the multiply")
                break
