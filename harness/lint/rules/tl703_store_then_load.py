"""TL703: a program stores to a tensor and loads other lanes' values back, with no barrier."""

from __future__ import annotations

import ast
import copy
import math

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


def resolved(flow, node: ast.AST | None, depth: int = 0) -> str:
    """``node``'s text with each name replaced by the one value assigned to it that reaches this use
    (``ptrs = base + offs`` read as ``base + offs``), so that one address under two names is one address. A
    name stays a name where more than one assignment reaches it, where its value was read from memory (two
    loads of one address need not return the same), and for loop variables and arguments (no assignment)."""
    if node is None:
        return ""
    clone = copy.deepcopy(node)
    for orig, new in zip(ast.walk(node), ast.walk(clone)):  # the same walk over the same shape: node by node
        if isinstance(orig, ast.Name) and orig.id in flow.env and depth < 8:
            values = flow.reaching(orig)
            if len(values) == 1 and not any(flow.m.tl_call(n) in ("load",) + ATOMICS for n in ast.walk(values[0])):
                new.id = f"({resolved(flow, values[0], depth + 1)})"  # unparse prints a name's text as it is
    return ast.unparse(clone)


def addends(flow, node: ast.AST, sign: int = 1, depth: int = 0) -> list[tuple[int, ast.AST]]:
    """``node`` as a sum of signed terms, through names one assignment (not a load) reaches."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        right = -sign if isinstance(node.op, ast.Sub) else sign
        return addends(flow, node.left, sign, depth) + addends(flow, node.right, right, depth)
    if isinstance(node, ast.Name) and node.id in flow.env and depth < 8:
        values = flow.reaching(node)
        if len(values) == 1 and not any(flow.m.tl_call(n) in ("load",) + ATOMICS for n in ast.walk(values[0])):
            return addends(flow, values[0], sign, depth + 1)
    return [(sign, node)]


def _literal_factor(term: ast.AST) -> int | None:
    """``x * 2`` or ``2 * x``: the literal int factor of a product."""
    if isinstance(term, ast.BinOp) and isinstance(term.op, ast.Mult):
        for side in (term.left, term.right):
            if isinstance(side, ast.Constant) and isinstance(side.value, int) and not isinstance(side.value, bool):
                return abs(side.value)
    return None


def apart(flow, stored: ast.AST, loaded: ast.AST) -> bool:
    """The two addresses differ by a constant that no lane's offsets can make up: ``base + 2 * o`` stored and
    ``base + 2 * o + 1`` loaded (an interleaved real and imaginary part). The terms common to both cancel; what
    is left is a literal on each side, and every common term that varies from lane to lane is a multiple of
    a literal whose greatest common divisor does not divide the difference."""
    a, b = addends(flow, stored), addends(flow, loaded)
    key = lambda t: (t[0], resolved(flow, t[1]))
    rest_a, rest_b = [key(t) for t in a], [key(t) for t in b]
    common = []
    for t in list(rest_a):
        if t in rest_b:
            rest_a.remove(t)
            rest_b.remove(t)
            common.append(t)
    consts = []
    for rest in (rest_a, rest_b):
        try:
            consts.append(sum(sign * int(text) for sign, text in rest))
        except ValueError:
            return False  # something else than a literal differs
    g = 0
    for term in (t for t in a if (t[0], resolved(flow, t[1])) in common):
        if scalar(flow, term[1]):
            continue  # the same for every lane of the program
        factor = _literal_factor(term[1])
        if not factor:
            return False
        g = math.gcd(g, factor)
    return g > 1 and (consts[0] - consts[1]) % g != 0


def scalar(flow, pointer) -> bool:
    """One address for every lane: no ``tl.arange`` in it, nor a loaded value (a block of indices)."""
    return not any(a[0] in ("arange", "tile", "load") for a in flow.atoms(pointer))


ATOMICS = ("atomic_add", "atomic_cas", "atomic_xchg", "atomic_max", "atomic_min", "atomic_and", "atomic_or",
           "atomic_xor")


def barriers(flow) -> list[int]:
    """The lines that order every warp of the program: ``tl.debug_barrier()``, and a scalar atomic whose result
    is used. Triton computes that atomic in one thread and hands its result to the others through shared
    memory behind a CTA barrier, the very instruction ``tl.debug_barrier()`` is (``bar.sync 0`` for sm_90,
    ``s_barrier`` for gfx942, Triton 3.7.1: benchmarks/lint_atomic_barrier.py); an atomic whose result is
    dropped gets none."""
    lines = [c.lineno for c in flow.calls("debug_barrier")]
    for call in flow.calls(*ATOMICS):
        pointer = arg(call, 0, "pointer")
        if pointer is not None and scalar(flow, pointer) and not isinstance(flow.parents.get(call), ast.Expr):
            lines.append(call.lineno)
    return lines


@rule("TL703", "store-then-load-no-barrier", cases=("store-then-load-no-barrier",), confidence=MEDIUM, bad=BAD,
      good=GOOD,
      summary="tl.store to a tensor, then a tl.load of the same tensor at other offsets, with no tl.debug_barrier "
              "between")
def check(module):
    """The lanes of one program are spread over warps that run independently: a value another warp stored a
    line earlier may not be in memory yet when this warp loads it. ``tl.debug_barrier()`` between the store
    and the load (and before the next overwrite) orders them. Quiet when the load reads exactly the
    addresses the same lanes stored (compared by what the names hold, not by their names), or addresses no lane
    stored (``2 * o + 1`` after ``2 * o``: an interleaved layout), when a scalar
    atomic whose result is used sits between them (Triton puts a barrier there), when both are scalar
    (one address stored, another loaded), or the two sit in the two branches of one ``if``/``else`` (or the store in a
    branch that returns, the load after it)."""
    for flow in flows(module):
        ops = sorted(memory_ops(flow), key=lambda o: (o[0].lineno, o[0].col_offset))
        lines = barriers(flow)
        stores = []
        for call, kind, pointer, _ in ops:
            param = pointer_param(flow, pointer)
            if kind == "store" and param:
                stores.append((call, param, resolved(flow, pointer)))
            elif kind == "load" and param:
                address = resolved(flow, pointer)
                for s, sparam, spointer in stores:
                    if scalar(flow, arg(s, 0, "pointer")) and scalar(flow, pointer):
                        continue  # one address stored, another loaded: nothing another warp wrote is read
                    if apart(flow, arg(s, 0, "pointer"), pointer):
                        continue  # the load's addresses are never ones the store wrote
                    if sparam == param and spointer != address and not exclusive(flow, s, call) and \
                            not any(s.lineno <= b <= call.lineno for b in lines) and not flow.in_loop(call):
                        yield call, (f"loads {param} at other offsets than the store on line {s.lineno} wrote, with no "
                                     f"tl.debug_barrier() between: lanes of other warps may not have stored yet")
                        break
