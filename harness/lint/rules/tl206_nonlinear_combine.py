"""TL206: a non-linear function of a block's partial reduction, combined across programs with an atomic add."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows, promote
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

def _terms(flow, node: ast.AST, depth: int = 0) -> list[ast.AST]:
    """The addends of an address (``base + rows[:, None] * s + cols[None, :]``), through names that one
    assignment reaches."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _terms(flow, node.left, depth) + _terms(flow, node.right, depth)
    if isinstance(node, ast.Name) and node.id in flow.env and depth < 8:
        values = flow.reaching(node)
        if len(values) == 1:
            return _terms(flow, values[0], depth + 1)
    return [node]


def _axis(flow, term: ast.AST) -> int | None:
    """The block axis a term of a 2-D address varies along: 0 for ``v[:, None]``, 1 for ``v[None, :]``;
    None when it says neither (a 1-D offset, or a scalar)."""
    axes = set()
    for n in flow.sources(term, lambda n: flow.m.tl_call(n) == "load"):
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Tuple) and len(n.slice.elts) == 2:
            kinds = [isinstance(e, ast.Slice) for e in n.slice.elts]
            if kinds.count(True) == 1:
                axes.add(kinds.index(True))
    return axes.pop() if len(axes) == 1 else None


def _walks(flow, terms: list[ast.AST]) -> bool:
    """These addends together step block by block with the program or a loop (a ``pid * B`` in one and a
    ``tl.arange(0, B)`` in another is a tile), or hold indices loaded at such offsets (a gather of a
    program's slice of ids)."""
    atoms = set().union(*(flow.atoms(t) for t in terms)) if terms else set()
    if any(a[0] == "tile" for a in atoms | promote(atoms, atoms)):
        return True
    return any(flow.m.tl_call(n) == "load" and any(a[0] == "tile" for a in flow.atoms(arg(n, 0, "pointer")))
               for t in terms for n in flow.sources(t))


def complete(flow, total: ast.Call) -> bool:
    """``total`` (a ``tl.sum``) adds lanes read, along the axis it sums, only at offsets no program or
    iteration walks block by block (no ``("tile", B)``, directly or through loaded indices): each program sums
    its whole extent, not a slice of one shared with other programs. Along a 2-D block's other axis the rows
    may come from anywhere (gathered through the program id): each row's sum is still its own."""
    summed = arg(total, 0, "input")
    if summed is None:
        return False
    axis = arg(total, 1, "axis")
    if not (isinstance(axis, ast.Constant) and isinstance(axis.value, int)):  # every lane of the block is summed
        loads = [n for n in flow.sources(summed) if flow.m.tl_call(n) == "load"]
        return bool(loads) and not any(a[0] == "tile" for n in loads for a in flow.atoms(arg(n, 0, "pointer")))
    loads = [n for n in flow.sources(summed, lambda n: flow.m.tl_call(n) == "load") if flow.m.tl_call(n) == "load"]
    for load in loads:
        pointer = arg(load, 0, "pointer")
        if pointer is None or _walks(flow, [t for t in _terms(flow, pointer) if _axis(flow, t) in (None, axis.value)]):
            return False
    return bool(loads)


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
    per row, which addition combines rightly (RMSNorm's weight gradient). For ``tl.sum(v, axis=k)`` of a 2-D
    block only the offsets along axis ``k`` count: rows gathered through the program id (``x[idx[:, None],
    cols[None, :]]`` with ``cols = tl.arange(0, D)``) are each summed whole."""
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
