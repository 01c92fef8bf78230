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


def whole_steps(flow, node: ast.BinOp) -> bool:
    """``(a - b) // n`` whose every use is whole steps from ``b`` toward ``a``: ``b + q * n`` (a range's stop from
    ``b``, the start of a tail after an unrolled part) or ``b += q * n``, directly or through a name assigned once.
    Under truncation toward zero ``|(a - b) // n * n| <= |a - b|``, so ``b + q * n`` lies between ``b`` and ``a``
    whatever their order: no position outside the two it starts from (a range from ``b`` to it runs no trip where
    ``a < b``, and a tail from it toward ``a`` none either). Python's floor is the one that could step past ``a``."""
    if not isinstance(node.op, ast.FloorDiv):
        return False
    b, n = ast.unparse(node.left.right), ast.unparse(node.right)
    times = flow.parents.get(node)
    if not (isinstance(times, ast.BinOp) and isinstance(times.op, ast.Mult)
            and n == ast.unparse(times.right if times.left is node else times.left)):
        return False
    return _stepped_from(flow, times, b, set())


def _stepped_from(flow, expr: ast.AST, b: str, seen: set) -> bool:
    """Whether ``expr`` is only ever added to ``b`` (``b + expr``, ``expr + b``, ``b += expr``), itself or through
    a name it is assigned to once."""
    holder = flow.parents.get(expr)
    if isinstance(holder, ast.BinOp) and isinstance(holder.op, ast.Add):
        return b == ast.unparse(holder.right if holder.left is expr else holder.left)
    if isinstance(holder, ast.AugAssign):
        return isinstance(holder.op, ast.Add) and holder.value is expr and ast.unparse(holder.target) == b
    if isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name) \
            and len(flow.env.get(holder.targets[0].id, ())) == 1 and holder.targets[0].id not in seen:
        name = holder.targets[0].id
        uses = [u for u in flow.nodes if isinstance(u, ast.Name) and u.id == name and isinstance(u.ctx, ast.Load)]
        return bool(uses) and all(_stepped_from(flow, u, b, seen | {name}) for u in uses)
    return False


@rule("TL102", "negative-remainder", cases=("c-style-division-negative",), confidence=MEDIUM, bad=BAD, good=GOOD,
      summary="(a - b) % n or (a - b) // n on tensor offsets, used in an address: Triton's % and // truncate "
              "toward zero, as in C")
def check(module):
    """Python's ``%`` takes the sign of the divisor; Triton's integer ``%`` and ``//`` on tensors follow C, so
    ``(i - shift) % n`` is negative where ``i < shift`` and the address lands before the tensor. Fires when
    the left operand is a subtraction of a runtime value from offsets (tl.arange or a program id) and the
    result reaches a load or store address; quiet for ``(a - b + n) % n``, when every access it reaches is
    masked to the lanes where ``a >= b``, when ``a`` was built by adding ``b`` (``a = pid * C + b``), and for
    ``(a - b) // n`` used only as whole steps from ``b`` toward ``a`` (``b + (a - b) // n * n``: between ``b`` and
    ``a`` under truncation, ``whole_steps``)."""
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
                    not offset_by(flow, node.left) and not whole_steps(flow, node):
                op = "%" if isinstance(node.op, ast.Mod) else "//"
                yield node, (f"{ast.unparse(node)}: Triton's {op} truncates toward zero (C, not Python), so it is "
                             f"negative wherever {ast.unparse(node.left.left)} < {ast.unparse(subtrahend)}, and "
                             f"the address lands before the tensor (add the divisor first: (a - b + n) {op} n)")
