"""TL502: a random-number offset built from a program id times a runtime size, in int32."""

from __future__ import annotations

import ast

from collections import Counter

from harness.lint.flow import Flow, arg, flows
from harness.lint.model import assignments
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
    before the multiply. Quiet for ``(e // d) * b`` where every launch passes a ``d`` that is ``b`` times other
    sizes (``d = R * C * D``, ``b = C * D``): a coordinate scaled back by a smaller stride is at most ``e``, an
    offset the kernel forms anyway, so it cannot wrap before ``e`` does (``e`` is checked as itself)."""
    for flow in flows(module):
        for call in flow.calls(*RNG):
            offset = arg(call, 1, "offset")
            for n in int32_products(flow, offset) if offset is not None else ():
                if rescaled_down(flow, n):
                    continue
                yield n, (f"the random offset {ast.unparse(n)} is an int32 product of a program id: past 2**31 it "
                          f"wraps and earlier random numbers repeat; cast to tl.int64 before the multiply")
                break


def rescaled_down(flow: Flow, product: ast.BinOp) -> bool:
    """``product`` is ``q * b`` with ``q`` only ever ``e // d`` (``d``, ``b`` runtime arguments), and each launch of
    the kernel (at least one) passes for ``d`` a product of sizes that holds every factor of what it passes for
    ``b``: then ``b <= d`` and ``q * b <= e``."""
    for q, b in ((product.left, product.right), (product.right, product.left)):
        if not isinstance(b, ast.Name) or not isinstance(q, ast.Name) or q.id not in flow.env:
            continue
        values = flow.reaching(q)
        if not values or not all(isinstance(v, ast.BinOp) and isinstance(v.op, ast.FloorDiv) and
                                 isinstance(v.right, ast.Name) and v.right.id in flow.k.params for v in values):
            continue
        divisors = {v.right.id for v in values}
        launches = flow.k.launches
        if len(divisors) == 1 and launches and all(divides(flow.m, l, b.id, *divisors) for l in launches):
            return True
    return False


def divides(module, launch, b: str, d: str) -> bool:
    """At this launch, the value passed for ``b`` is a product of factors all found in the one passed for ``d``."""
    if b not in launch.args or d not in launch.args:
        return False
    fb, fd = factors(module, launch.launcher, launch.args[b]), factors(module, launch.launcher, launch.args[d])
    return fb is not None and fd is not None and not fb - fd


def factors(module, fn, node: ast.AST, depth: int = 0) -> Counter | None:
    """The factors of a product as source text, through names assigned once in ``fn`` and a tuple saved on an
    object's attribute in another function (``ctx.shape = (n, cd, rcd)`` read back as ``n, cd, rcd = ctx.shape``)."""
    if depth > 6:
        return None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        a, b = factors(module, fn, node.left, depth + 1), factors(module, fn, node.right, depth + 1)
        return a + b if a is not None and b is not None else None
    if isinstance(node, ast.Name) and fn is not None:
        values = assignments(fn).get(node.id, [])
        if len(values) == 1:
            return factors(module, fn, values[0], depth + 1)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and \
            isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
        saved = [(f, a.value) for f in module.functions.values() for a in ast.walk(f) if isinstance(a, ast.Assign)
                 for t in a.targets if isinstance(t, ast.Attribute) and ast.unparse(t) == ast.unparse(node.value)]
        if len(saved) == 1 and isinstance(saved[0][1], ast.Tuple) and node.slice.value < len(saved[0][1].elts):
            return factors(module, saved[0][0], saved[0][1].elts[node.slice.value], depth + 1)
    return Counter([ast.unparse(node)])
