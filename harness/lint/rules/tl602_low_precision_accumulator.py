"""TL602: a running sum kept in fp16 or bf16."""

from __future__ import annotations

import ast

from harness.lint.flow import flows
from harness.lint.registry import HIGH, rule

BAD = '''
import triton
import triton.language as tl

@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float16)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))
'''

GOOD = BAD.replace("dtype=tl.float16", "dtype=tl.float32")


def low_precision_inits(flow):
    """(name, call): ``name = tl.zeros(..., dtype=tl.float16 | tl.bfloat16)`` (or tl.full)."""
    for name, values in flow.env.items():
        for value, _ in values:
            if flow.m.tl_call(value) in ("zeros", "full"):
                dtype = next((k.value for k in value.keywords if k.arg == "dtype"), value.args[-1] if
                             flow.m.tl_call(value) == "full" and len(value.args) >= 3 else
                             value.args[1] if flow.m.tl_call(value) == "zeros" and len(value.args) >= 2 else None)
                if dtype is not None and ast.unparse(dtype).rsplit(".", 1)[-1] in ("float16", "bfloat16"):
                    yield name, value


def running(flow, init, update) -> bool:
    """``update`` sits in a loop that does not also make ``init`` again: the sum runs over its iterations
    (a tile zeroed at the top of each iteration sums one iteration's terms only)."""
    loops = lambda n: {id(a) for a in flow.ancestors(n) if isinstance(a, (ast.For, ast.While))}  # noqa: E731
    return bool(loops(update) - loops(init))


@rule("TL602", "low-precision-accumulator", cases=("fp16-accumulation",), confidence=HIGH, bad=BAD, good=GOOD,
      summary="an accumulator made by tl.zeros/tl.full with dtype fp16 or bf16 and added to in a loop")
def check(module):
    """fp16 has 11 significant bits and a maximum of 65,504; bf16 has 8 bits. A running sum kept in either
    loses every addend smaller than its last bit once it has grown, and fp16 overflows to inf. Accumulate
    in fp32 and convert once at the end. Only additions count: a running max (``tl.maximum``) is exact; and
    only a sum carried across a loop's iterations (a tile zeroed inside the loop that adds to it is not)."""
    for flow in flows(module):
        for name, init in low_precision_inits(flow):
            updates = [v for v, _ in flow.env.get(name, ()) if v is not init and running(flow, init, v) and
                       isinstance(v, ast.BinOp) and isinstance(v.op, (ast.Add, ast.Sub)) and
                       any(isinstance(n, ast.Name) and n.id == name for n in (v.left, v.right))]
            if updates:
                yield init, (f"{name} is a {ast.unparse(init).split('dtype=')[-1].rstrip(')')} accumulator, added "
                             f"to in the loop on line {updates[0].lineno}: the running sum keeps 8 to 11 bits; "
                             f"accumulate in tl.float32")
