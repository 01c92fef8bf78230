"""TL102: ``%`` or ``//`` on a difference that can be negative, used as an address."""

from __future__ import annotations

import ast

from harness.lint.flow import flows
from harness.lint.registry import MEDIUM, rule
from harness.lint.rules._common import memory_ops

BAD = '''
import triton
import triton.language as tl

@triton.jit
def roll_kernel(x_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    src = (offs - shift) % n
    tl.store(out_ptr + offs, tl.load(x_ptr + src, mask=offs < n), mask=offs < n)
'''

GOOD = BAD.replace("(offs - shift) % n", "(offs - shift + n) % n")


def offset_by(flow, difference: ast.BinOp) -> bool:
    """``a - b`` where ``a`` was built as ``... + b`` (``start = pid * CHUNK + SHIFT``, then ``start - SHIFT``):
    what is taken off was added first."""
    b, stack, seen = ast.unparse(difference.right), [difference.left], set()
    while stack:  # through names and sums only: tl.minimum(a + b, n) may be less than b
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, ast.Name) and n.id in flow.env:
            stack += flow.reaching(n)
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.Add):
            if b in (ast.unparse(n.left), ast.unparse(n.right)):
                return True
            stack += [n.left, n.right]
    return False


def guarded(flow, mask, difference: ast.BinOp) -> bool:
    """The access's mask keeps only the lanes where ``a - b`` is not negative: it compares ``a >= b`` (or
    ``b <= a``, or ``>``) itself, or through a name (``tail = offs >= shift``)."""
    a, b = ast.unparse(difference.left), ast.unparse(difference.right)
    for n in flow.sources(mask) if mask is not None else ():
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            left, right = ast.unparse(n.left), ast.unparse(n.comparators[0])
            if isinstance(n.ops[0], (ast.GtE, ast.Gt)) and (left, right) == (a, b) or \
                    isinstance(n.ops[0], (ast.LtE, ast.Lt)) and (left, right) == (b, a):
                return True
    return False


@rule("TL102", "negative-remainder", cases=("c-style-division-negative",), confidence=MEDIUM, bad=BAD, good=GOOD,
      summary="(a - b) % n or (a - b) // n on tensor offsets, used in an address: Triton's % and // truncate "
              "toward zero, as in C")
def check(module):
    """Python's ``%`` takes the sign of the divisor; Triton's integer ``%`` and ``//`` on tensors follow C, so
    ``(i - shift) % n`` is negative where ``i < shift`` and the address lands before the tensor. Fires when
    the left operand is a subtraction of a runtime value from offsets (tl.arange or a program id) and the
    result reaches a load or store address; quiet for ``(a - b + n) % n``, when every access it reaches is
    masked to the lanes where ``a >= b``, and when ``a`` was built by adding ``b`` (``a = pid * C + b``)."""
    for flow in flows(module):
        ops = [(p, m, {id(n) for n in flow.sources(p)}) for _, _, p, m in memory_ops(flow)]
        reached = set().union(*(r for _, _, r in ops)) if ops else set()
        for node in flow.nodes:
            if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.FloorDiv))
                    and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Sub)):
                continue
            minuend, subtrahend = flow.atoms(node.left.left), node.left.right
            if isinstance(subtrahend, ast.Constant) or id(node) not in reached:
                continue
            if any(a[0] in ("arange", "tile", "pid", "loop") for a in minuend) and \
                    not any(a[0] in ("arange", "tile") for a in flow.atoms(subtrahend)) and \
                    not all(guarded(flow, m, node.left) for _, m, r in ops if id(node) in r) and \
                    not offset_by(flow, node.left):
                op = "%" if isinstance(node.op, ast.Mod) else "//"
                yield node, (f"{ast.unparse(node)}: Triton's {op} truncates toward zero (C, not Python), so it is "
                             f"negative wherever {ast.unparse(node.left.left)} < {ast.unparse(subtrahend)}, and "
                             f"the address lands before the tensor (add the divisor first: (a - b + n) {op} n)")
