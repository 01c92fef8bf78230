"""TL703: a program stores to a tensor and loads other lanes' values back, with no barrier."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows
from harness.lint.registry import MEDIUM, rule
from harness.lint.rules._common import memory_ops, pointer_param

BAD = '''
import triton
import triton.language as tl

@triton.jit
def rotate_kernel(x_ptr, out_ptr, D: tl.constexpr):
    row = tl.program_id(0)
    d = tl.arange(0, D)
    tl.store(out_ptr + row * D + d, tl.load(x_ptr + row * D + d))
    partner = tl.load(out_ptr + row * D + (d + D // 2) % D)
    tl.store(out_ptr + row * D + d, partner)
'''

GOOD = BAD.replace("    partner = ", "    tl.debug_barrier()\n    partner = ")


def exclusive(flow, a: ast.AST, b: ast.AST) -> bool:
    """``a`` and ``b`` sit in the two branches of one ``if``/``else``, or ``a`` in a branch that ends in ``return``
    and ``b`` after it: never both in one program."""
    if flow.returns_between(a, b):
        return True
    for node in flow.ancestors(a):
        if isinstance(node, ast.If):
            in_body = any(x is a for s in node.body for x in ast.walk(s))
            other = node.orelse if in_body else node.body
            if any(x is b for s in other for x in ast.walk(s)):
                return True
    return False


def scalar(flow, pointer) -> bool:
    """One address for every lane: no ``tl.arange`` in it, nor a loaded value (a block of indices)."""
    return not any(a[0] in ("arange", "tile", "load") for a in flow.atoms(pointer))


@rule("TL703", "store-then-load-no-barrier", cases=("store-then-load-no-barrier",), confidence=MEDIUM, bad=BAD,
      good=GOOD,
      summary="tl.store to a tensor, then a tl.load of the same tensor at other offsets, with no tl.debug_barrier "
              "between")
def check(module):
    """The lanes of one program are spread over warps that run independently: a value another warp stored a
    line earlier may not be in memory yet when this warp loads it. ``tl.debug_barrier()`` between the store
    and the load (and before the next overwrite) orders them. Quiet when the load reads exactly the
    addresses the same lanes stored, when both are scalar (one address stored, another loaded), or the two
    sit in the two branches of one ``if``/``else`` (or the store in a branch that returns, the load after it)."""
    for flow in flows(module):
        ops = sorted(memory_ops(flow), key=lambda o: (o[0].lineno, o[0].col_offset))
        barriers = [c.lineno for c in flow.calls("debug_barrier")]
        stores = []
        for call, kind, pointer, _ in ops:
            param = pointer_param(flow, pointer)
            if kind == "store" and param:
                stores.append((call, param, ast.unparse(pointer)))
            elif kind == "load" and param:
                for s, sparam, spointer in stores:
                    if scalar(flow, arg(s, 0, "pointer")) and scalar(flow, pointer):
                        continue  # one address stored, another loaded: nothing another warp wrote is read
                    if sparam == param and spointer != ast.unparse(pointer) and not exclusive(flow, s, call) and \
                            not any(s.lineno <= b <= call.lineno for b in barriers) and not flow.in_loop(call):
                        yield call, (f"loads {param} at other offsets than the store on line {s.lineno} wrote, with no "
                                     f"tl.debug_barrier() between: lanes of other warps may not have stored yet")
                        break
