"""TL501 (preview): a program id times a runtime stride in an address, in int32."""

from __future__ import annotations

import ast

from harness.lint.fixes import int64
from harness.lint.flow import flows
from harness.lint.registry import LOW, rule
from harness.lint.rules._common import int32_products, memory_ops, widened

BAD = '''
import triton
import triton.language as tl

@triton.jit
def row_max_kernel(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    tl.store(out_ptr + row, tl.max(x, axis=0))
'''

GOOD = BAD.replace("row = tl.program_id(0)", "row = tl.program_id(0).to(tl.int64)")


def widen(flow, product: ast.BinOp):
    """The fix: ``.to(tl.int64)`` on the side of the product that holds the program id."""
    tl = "tl" if flow.m.names.tl_name("tl.int64") else next(iter(sorted(flow.m.names.tl_names)), "tl")
    for side in (product.left, product.right):
        if any(flow.m.tl_call(s) == "program_id" for s in flow.sources(side, lambda x: widened(flow, x))):
            return int64(side, tl)
    return None


@rule("TL501", "int32-pid-offset", cases=("int32-offset-overflow", "int32-pid-stride-overflow"), confidence=LOW,
      preview=True, bad=BAD, good=GOOD,
      summary="tl.program_id (int32) times a runtime stride in a load/store address, with no int64 cast")
def check(module):
    """``tl.program_id`` is int32 and so is a Python int argument below 2**31, so ``row * stride`` is an int32
    product: past 2**31 elements it wraps negative and the address lands gigabytes before the tensor. Cast
    before the multiply (``tl.program_id(0).to(tl.int64)``). Preview: almost every kernel has this product,
    and it is only wrong for tensors past 2**31 elements, which lint cannot see."""
    for flow, n, _ in offsets(module):
        yield n, (f"{ast.unparse(n)} multiplies a program id (int32) by a runtime argument in int32: it "
                  f"wraps past 2**31 and the address goes negative; cast the program id to tl.int64 "
                  f"before the multiply"), "int32-offset-overflow", widen(flow, n)


def offsets(module, narrow: dict | None = None):
    """Each int32 product of a program id and a runtime argument in a load's or store's address, once:
    (flow, the product, the pointer expression it is in). The probe reads the launched kernels with it
    (``harness.probe.int32_offsets``), giving ``narrow``: {kernel name: its pointer arguments whose tensors hold
    32-bit or narrower integers at the launch}, whose loaded values are int32 sources too."""
    for flow in flows(module):
        seen = set()
        mine = frozenset((narrow or {}).get(flow.k.name, ()))
        for call, kind, pointer, _ in memory_ops(flow):
            for n in int32_products(flow, pointer, mine):
                if id(n) not in seen:
                    seen.add(id(n))
                    yield flow, n, pointer
