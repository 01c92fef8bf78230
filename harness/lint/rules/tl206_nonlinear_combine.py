"""TL206: a non-linear function of a block's partial reduction, combined across programs with an atomic add."""

from __future__ import annotations

import ast

from harness.lint.flow import arg, flows, promote
from harness.lint.registry import HIGH, rule
from harness.lint.rules._common import addends

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

def _axes(flow, term: ast.AST) -> tuple[int, frozenset] | None:
    """The rank of the block a term of an address is lifted into and the axes it varies along, from the subscript
    that lifts it: (2, {0}) for ``v[:, None]``, (2, {1}) for ``v[None, :]``, (3, {0, 1}) for ``k[:, :, None]``,
    (3, {2}) for ``d[None, None, :]``; the term's own subscript first (``k_pos[:, :, None] * D`` lifts a 2-D
    ``k_pos`` made of its own), else those of what it reads; None when none says or two disagree."""
    def lifts(nodes) -> set:
        found = set()
        for n in nodes:
            if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Tuple) and len(n.slice.elts) >= 2:
                elts = n.slice.elts
                if all(isinstance(e, ast.Slice) or (isinstance(e, ast.Constant) and e.value is None) for e in elts):
                    found.add((len(elts), frozenset(i for i, e in enumerate(elts) if isinstance(e, ast.Slice))))
        return found

    found = lifts(ast.walk(term)) or lifts(flow.sources(term, lambda n: flow.m.tl_call(n) == "load"))
    return found.pop() if len(found) == 1 else None


def _lift(node: ast.AST) -> tuple[int, frozenset] | None:
    """(rank, the axes it varies along) of a subscript that lifts a value into a bigger block: ``v[:, None]`` is
    (2, {0}), ``v[None, :]`` (2, {1}); None for any other node."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) >= 2:
        elts = node.slice.elts
        if all(isinstance(e, ast.Slice) or isinstance(e, ast.Constant) and e.value is None for e in elts) and \
                any(isinstance(e, ast.Constant) for e in elts):
            return len(elts), frozenset(i for i, e in enumerate(elts) if isinstance(e, ast.Slice))
    return None


def _summed_loads(flow, summed: ast.AST, axis: int, covered: frozenset) -> list:
    """The loads whose values reach ``summed`` and may vary along its summed ``axis``: a load reached only through
    lifts that leave that axis out (``mu[:, None]`` summed along axis 1: one value a row) is constant along it,
    whatever its address walks, and is left out."""
    is_load = lambda n: flow.m.tl_call(n) == "load"  # noqa: E731
    out, lifted = [], []
    for n, done in reached(flow, summed, lambda n: is_load(n) or _lift(n) is not None, False, covered):
        if is_load(n):
            out.append((n, done))
            continue
        rank, axes = _lift(n)
        across = (axis + rank if axis < 0 else axis) in axes
        lifted += [(load, d, across) for load, d in reached(flow, n.value, is_load, False, done)]
    direct = {id(load) for load, _ in out}
    return out + [(load, d) for load, d, across in lifted if across or id(load) in direct]


def _along(flow, term: ast.AST, axis: int) -> bool:
    """Whether a term of an address may vary along block axis ``axis`` (negative counted from the last): unknown
    counts as yes."""
    got = _axes(flow, term)
    if got is None:
        return True
    rank, axes = got
    return (axis + rank if axis < 0 else axis) in axes


def _walks(flow, terms: list[ast.AST]) -> bool:
    """These addends together step block by block with the program or a loop (a ``pid * B`` in one and a
    ``tl.arange(0, B)`` in another is a tile), or hold indices loaded at such offsets (a gather of a
    program's slice of ids)."""
    atoms = set().union(*(flow.atoms(t) for t in terms)) if terms else set()
    if any(a[0] == "tile" for a in atoms | promote(atoms, atoms)):
        return True
    return any(flow.m.tl_call(n) == "load" and any(a[0] == "tile" for a in flow.atoms(arg(n, 0, "pointer")))
               for t in terms for n in flow.sources(t))


ACCUMULATE = {"maximum", "minimum"}  # acc = tl.maximum(acc, x): a running max (or min); acc += x: a running sum


def _full_loop(flow, loop: ast.AST) -> bool:
    """A ``for`` whose bounds are the same in every program (no program id, nothing loaded): each program runs all
    of it, so what it accumulates over the loop is not split among programs."""
    if not isinstance(loop, ast.For):
        return False
    it = loop.iter
    bounds = it.args[:2] if isinstance(it, ast.Call) else [it]
    return not any(a[0] in ("pid", "load") for b in bounds for a in flow.atoms(b))


def _accumulates(flow, value: ast.AST, name: str) -> bool:
    """``value`` (assigned to ``name``) folds the name's own value into it: ``name + x``, ``x + name`` (``+=``
    too), ``tl.maximum(name, x)``, ``tl.minimum(x, name)``."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        sides = [value.left, value.right]
    elif flow.m.tl_call(value) in ACCUMULATE:
        sides = list(value.args)
    else:
        return False
    return any(isinstance(s, ast.Name) and s.id == name for s in sides)


def _covered_loop(flow, use: ast.Name, value: ast.AST) -> str | None:
    """The variable of the loop whose every iteration ``value`` accumulates into ``use.id``, when ``use`` reads it
    after that loop: the value there is the reduction over the whole loop (its running max or sum), complete
    along the axis the loop walks."""
    if not _accumulates(flow, value, use.id):
        return None
    around = {id(a) for a in flow.ancestors(use)}
    for loop in flow.ancestors(value):
        if isinstance(loop, (ast.For, ast.While)) and id(loop) not in around:
            return loop.target.id if _full_loop(flow, loop) and isinstance(loop.target, ast.Name) else None
    return None


def reached(flow, node: ast.AST, hit, through: bool,
            covered: frozenset = frozenset()) -> list[tuple[ast.AST, frozenset]]:
    """Each node ``hit`` accepts whose value reaches ``node`` (a ``tl.load``, a ``tl.sum``), with the loops (their
    variables) that the value went through a running reduction of, over every iteration, on the way (``m =
    tl.maximum(m, tl.max(s, axis=1))`` in a loop, read after it), added to ``covered``. ``through``: also what
    reaches a hit (the loads that make a load's address: gathered indices)."""
    out, seen, stack = [], set(), [(node, covered)]
    while stack:
        n, done = stack.pop()
        if (id(n), done) in seen:
            continue
        seen.add((id(n), done))
        if hit(n):
            out.append((n, done))
            if not through:
                continue
        if isinstance(n, ast.Name) and n.id in flow.env:
            for v in flow.reaching(n):
                loop = _covered_loop(flow, n, v)
                stack.append((v, done | {loop} if loop else done))
        else:
            stack.extend((c, done) for c in ast.iter_child_nodes(n))
    return out


def _uncovered(flow, pointer: ast.AST, covered: frozenset) -> list[ast.AST]:
    """The addends of a load's address but those a covered loop's variable steps (an addend that also holds a
    program id, a pointer advanced in the loop from a program's block, stays)."""
    return [t for t in addends(flow, pointer) if ("pid",) in flow.atoms(t) or
            not any(("loop", v) in flow.atoms(t) for v in covered)]


def _tiled(flow, pointer: ast.AST, covered: frozenset) -> bool:
    """The address walks a tile, leaving out the addends a covered loop steps."""
    if not covered:
        return any(a[0] == "tile" for a in flow.atoms(pointer))
    atoms = set().union(*(flow.atoms(t) for t in _uncovered(flow, pointer, covered)))
    return any(a[0] == "tile" for a in atoms | promote(atoms, atoms))


def complete(flow, total: ast.Call, covered: frozenset = frozenset()) -> bool:
    """``total`` (a ``tl.sum``) adds lanes read, along the axis it sums, only at offsets no program or
    iteration walks block by block (no ``("tile", B)``, directly or through loaded indices): each program sums
    its whole extent, not a slice of one shared with other programs. Along a 2-D block's other axis the rows
    may come from anywhere (gathered through the program id): each row's sum is still its own. A value read after
    a loop that folds every iteration into it (a running ``tl.maximum``/``tl.minimum`` or sum over a loop that
    every program runs whole) is complete along what that loop walks: the addresses' addends its variable steps
    do not count (``covered``: those of the loops ``total`` itself is folded over, on its way to the atomic)."""
    summed = arg(total, 0, "input")
    if summed is None:
        return False
    is_load = lambda n: flow.m.tl_call(n) == "load"  # noqa: E731
    axis = arg(total, 1, "axis")
    if not (isinstance(axis, ast.Constant) and isinstance(axis.value, int)):  # every lane of the block is summed
        loads = reached(flow, summed, is_load, True, covered)
        return bool(loads) and not any(_tiled(flow, arg(n, 0, "pointer"), done) for n, done in loads)
    loads = reached(flow, summed, is_load, False, covered)
    for load, done in _summed_loads(flow, summed, axis.value, covered):
        pointer = arg(load, 0, "pointer")
        if pointer is None or _walks(flow, [t for t in _uncovered(flow, pointer, done)
                                             if _along(flow, t, axis.value)]):
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
    cols[None, :]]`` with ``cols = tl.arange(0, D)``) are each summed whole, and a per-row value lifted at its use
    (``v - mu[:, None]``, summed along axis 1) is one value a row, whatever rows its load walks. A value read after
    a loop that every
    program runs whole and that folds each iteration into it (``m = tl.maximum(m, tl.max(s, axis=1))``, ``acc +=
    ...``) is complete along what the loop walks: summing it, the program adds its whole extent (a tl.sum taken
    inside the loop is still one block's)."""
    for flow in flows(module):
        for call in flow.calls("atomic_add"):
            value = arg(call, 1, "val")
            if value is None:
                continue
            for n in flow.sources(value, lambda n: flow.m.tl_call(n) in ("sum", "load")):
                name = flow.m.tl_call(n)
                sums = reached(flow, n, lambda s: flow.m.tl_call(s) == "sum", True)
                if name in NONLINEAR and sums and not all(complete(flow, s, covered) for s, covered in sums):
                    yield call, (f"atomic_add of tl.{name}(...) of this program's tl.sum: the programs' "
                                 f"tl.{name}s add up to something else than tl.{name} of the total; add the "
                                 f"partial sums and apply tl.{name} once, after")
                    break
