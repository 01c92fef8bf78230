"""Helpers that several rules share (not a rule: the leading ``_`` keeps it out of the registry)."""

from __future__ import annotations

import ast
import re
from typing import Iterator

from harness.lint.flow import Flow, arg
from harness.lint.model import Launch, Module, dotted

NONNEG = {"abs", "exp", "exp2", "sqrt", "sqrt_rn", "rsqrt", "sigmoid", "softplus"}
REDUCE_MAX = {"max", "min", "argmax", "argmin"}


def memory_ops(flow: Flow) -> Iterator[tuple[ast.Call, str, ast.expr, ast.expr | None]]:
    """Every ``tl.load``/``tl.store``: (call, 'load'|'store', pointer, mask), in source order."""
    cached = getattr(flow, "_memory_ops", None)
    if cached is None:
        cached = flow._memory_ops = []
        for call in flow.calls("load", "store"):
            kind = flow.m.tl_call(call)
            pointer = arg(call, 0, "pointer")
            if pointer is not None:
                cached.append((call, kind, pointer, arg(call, 1 if kind == "load" else 2, "mask")))
    return iter(cached)


def is_none(node: ast.AST | None) -> bool:
    return node is None or isinstance(node, ast.Constant) and node.value is None


def under_if(flow: Flow, node: ast.AST) -> bool:
    """Inside an ``if`` or a conditional expression (a guard lint cannot read)."""
    return any(isinstance(p, (ast.If, ast.IfExp)) for p in flow.ancestors(node))


def is_zero(node: ast.AST | None) -> bool:
    """``0``, ``0.0``, or absent (a masked lane's value is then undefined, and 0 on today's GPUs)."""
    return node is None or isinstance(node, ast.Constant) and node.value in (0, 0.0) and node.value is not False


def masked_loads(flow: Flow) -> Iterator[tuple[ast.Call, ast.expr | None]]:
    """Every ``tl.load`` that has a mask: (call, other) with other None when not given."""
    for call, kind, _, mask in memory_ops(flow):
        if kind == "load" and not is_none(mask):
            yield call, arg(call, 2, "other")


def nonneg_stop(flow: Flow):
    """A ``sources`` stop: do not look through calls whose result is never negative, nor ``x * x``."""
    def stop(n: ast.AST) -> bool:
        if flow.m.tl_call(n) in NONNEG or isinstance(n, ast.Call) and dotted(n.func) == "abs":
            return True
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and ast.dump(n.left) == ast.dump(n.right):
            return True
        return isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow)
    return stop


def launcher_calls(launch: Launch, *names: str) -> list[ast.Call]:
    """Calls in the launch's function whose dotted name ends with one of ``names``."""
    if launch.launcher is None:
        return []
    return [n for n in ast.walk(launch.launcher) if isinstance(n, ast.Call)
            and dotted(n.func).rsplit(".", 1)[-1] in names]


def pointer_param(flow: Flow, pointer: ast.expr) -> str | None:
    """The kernel argument a pointer expression is based on (``x_ptr`` in ``x_ptr + offs``), if one."""
    names = [n.id for n in flow.sources(pointer) if isinstance(n, ast.Name) and n.id in flow.k.params
             and n.id not in flow.env and n.id not in flow.k.constexprs]
    ptrs = [n for n in names if "ptr" in n.lower()] or names
    return ptrs[0] if len(set(ptrs)) == 1 else None


def module_int(module: Module, node: ast.AST) -> int | None:
    """An int literal, or a module-level name bound to one."""
    if isinstance(node, ast.Name) and node.id in module.constants:
        node = module.constants[node.id]
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


SHAPE_CALLS = {"size", "numel", "dim"}


def from_shape(launch: Launch, node: ast.AST, depth: int = 0) -> bool:
    """``node`` is a tensor's size as it is (``x.shape[1]``, ``d`` of ``rows, d = x.shape``), not a block."""
    node = launch.resolve(node) if depth < 3 else node
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Attribute) and node.value.attr == "shape" or \
            depth < 3 and from_shape(launch, node.value, depth + 1)
    if isinstance(node, ast.Attribute):
        return node.attr == "shape"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in SHAPE_CALLS
    return False


BLOCKISH = re.compile(r"(?i)block|tile|chunk|split|(^|_)bs($|_)|bsz|^[xyzr]?bl?k?$|^b[mnkd]?$|^\d+$")


def exact_width(flow: Flow, block: str) -> bool:
    """The block size ``block`` is (as far as lint can tell) a whole axis, not a block of it: it is 1, every launch
    passes a tensor's own size for it (or 1), or it has no block-like name (``D``, ``HEAD_DIM``) and no launch
    rounds it up (``next_power_of_2``)."""
    launches = flow.k.launches
    if block == "1" or launches and all(block in l.args and (from_shape(l, l.args[block]) or module_int(
            flow.m, l.resolve(l.args[block])) == 1) for l in launches):
        return True
    if BLOCKISH.search(block):
        return False
    return not any(block in l.args and "next_power_of_2" in ast.unparse(l.args[block]) for l in launches)


INT64 = ("int64", "uint64")


def widened(flow: Flow, node: ast.AST) -> bool:
    """``x.to(tl.int64)`` / ``tl.cast(x, tl.int64)`` / ``x.to(tl.uint64)``: a 64-bit value."""
    if isinstance(node, ast.Call) and node.args:
        target = node.args[-1] if flow.m.tl_call(node) == "cast" else node.args[0] \
            if isinstance(node.func, ast.Attribute) and node.func.attr == "to" else None
        return target is not None and ast.unparse(target).rsplit(".", 1)[-1] in INT64
    return False


def int32_products(flow: Flow, expr: ast.AST):
    """``a * b`` in ``expr`` (through names) where ``a`` comes from a program id with no 64-bit cast on the way
    and ``b`` is a runtime (not constexpr) kernel argument that is not a pointer: an int32 product."""
    for n in flow.sources(expr, lambda x: widened(flow, x)):
        if not (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)):
            continue
        for side, other in ((n.left, n.right), (n.right, n.left)):
            runtime = isinstance(other, ast.Name) and other.id in flow.k.params and \
                other.id not in flow.k.constexprs and "ptr" not in other.id.lower() and other.id not in flow.env
            if runtime and any(flow.m.tl_call(s) == "program_id" for s in flow.sources(side, lambda x: widened(flow, x))):
                yield n
                break


def scalar_operand(flow: Flow, node: ast.AST) -> bool:
    """A number, or a kernel argument or name that holds no block (no tl.arange, no loaded tensor)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return scalar_operand(flow, node.operand)
    atoms = flow.atoms(node)
    return isinstance(node, (ast.Name, ast.Attribute)) and not any(a[0] in ("arange", "tile", "load") for a in atoms)


def value_chain(flow: Flow, expr: ast.AST, stop=lambda n: False) -> Iterator[ast.AST]:
    """The nodes that ``expr`` *is*, give or take a scale: through names (reaching assignments),
    ``x[:, None]``, ``x.to(...)``, unary minus, and arithmetic with a number or a scalar argument
    (``x * scale``, ``x - 1``). Not through arithmetic with another block, nor calls."""
    seen, stack = set(), [expr]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        yield n
        if stop(n):
            continue
        if isinstance(n, ast.Name) and n.id in flow.env:
            stack.extend(flow.reaching(n))
        elif isinstance(n, ast.Subscript):
            stack.append(n.value)
        elif isinstance(n, ast.UnaryOp):
            stack.append(n.operand)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("to", "cast") \
                and flow.m.tl_call(n) is None:
            stack.append(n.func.value)
        elif isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            if scalar_operand(flow, n.right):
                stack.append(n.left)
            elif scalar_operand(flow, n.left):
                stack.append(n.right)


def divisibility_checked(flow: Flow, block: str) -> bool:
    """Every launch's launcher asserts or tests a remainder by this block (``assert M % BLOCK_M == 0``):
    the sizes are multiples of it, and the last block is never partial."""
    def checked(launch: Launch) -> bool:
        names = {block} | ({ast.unparse(launch.args[block])} if block in launch.args else set())
        return launch.launcher is not None and any(
            isinstance(n, (ast.Assert, ast.If)) and any(isinstance(b, ast.BinOp) and isinstance(b.op, ast.Mod) and
                                                         ast.unparse(b.right) in names for b in ast.walk(n.test))
            for n in ast.walk(launch.launcher))
    return bool(flow.k.launches) and all(checked(l) for l in flow.k.launches)
