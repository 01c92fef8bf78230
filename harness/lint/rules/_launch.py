"""What one launch fixes about its kernel, read at the launch site (not a rule: the leading ``_`` keeps it out
of the registry).

A ``tl.constexpr`` argument is part of the kernel's specialization: Triton compiles one kernel per value, and
an ``if`` on it is resolved when compiling (only the branch taken is generated). A launch that passes such an
argument as a literal (``FUSED=0``, ``ACC=False``, a name the launcher binds once to a literal, a module
constant nobody rebinds, or the parameter's default when the launch leaves it out) runs a kernel in which the
other branch does not exist. ``dead_for(flow, launch, node)`` says that ``node`` sits in such a branch (or after
an ``if`` of that kind whose branch returns). Anything lint cannot pin down (a launcher's parameter, a value set
by ``@triton.heuristics`` or by autotune configs, ``**kwargs`` at the launch) is unknown: the branch is live.
"""

from __future__ import annotations

import ast

from harness.lint.model import Launch, assignments

UNKNOWN = object()  # a value lint cannot pin down at the launch
LITERALS = (bool, int, float, str, type(None))


def _literal(node: ast.AST | None):
    if isinstance(node, ast.Constant) and isinstance(node.value, LITERALS):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        inner = _literal(node.operand)
        if inner is not UNKNOWN and not isinstance(inner, str):
            return (not inner) if isinstance(node.op, ast.Not) else -inner
    return UNKNOWN


def _stores(root: ast.AST, name: str) -> int:
    """How many times ``root`` binds ``name`` (an assignment, a loop's target, ``+=``, ``with ... as``, ``:=``)."""
    return sum(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(root))


def _constant(module, name: str):
    """A module-level name bound once, to a literal, that no function rebinds with ``global``."""
    if name not in module.constants or _stores(module.tree, name) != 1 or any(
            isinstance(n, ast.Global) and name in n.names for n in module.nodes):
        return UNKNOWN
    return _literal(module.constants[name])


def passed_value(launch: Launch, module, node: ast.AST):
    """The literal ``node`` (an argument of the launch) is: a literal, or a name the launcher assigns once to a
    literal and binds no other way (no loop over it), and does not take as a parameter, or (a name the launcher
    never binds) a module constant bound once to a literal that no function rebinds with ``global``. ``UNKNOWN``
    otherwise."""
    value = _literal(node)
    if value is not UNKNOWN or not isinstance(node, ast.Name):
        return value
    fn = launch.launcher
    if fn is not None:
        params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        params |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
        bound = assignments(fn).get(node.id, [])
        if node.id in params or len(bound) > 1 or _stores(fn, node.id) != len(bound):
            return UNKNOWN
        if bound:
            return _literal(bound[0])
    return _constant(module, node.id)


def _default(fn: ast.FunctionDef, name: str) -> ast.expr | None:
    positional = fn.args.posonlyargs + fn.args.args
    for a, d in zip(positional[len(positional) - len(fn.args.defaults):], fn.args.defaults):
        if a.arg == name:
            return d
    for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults):
        if a.arg == name:
            return d
    return None


def launch_constant(flow, launch: Launch, name: str):
    """The value the kernel's constexpr ``name`` has in the specialization ``launch`` compiles, or ``UNKNOWN``."""
    k = flow.k
    if name not in k.constexprs or name in k.heuristics or name in flow.env or (
            k.autotune is not None and name in k.autotune.tuned):
        return UNKNOWN  # not a parameter fixed by the launch alone (set by a heuristic or a config, or reassigned)
    module = launch.home or flow.m
    call = launch.node
    index = k.params.index(name) if name in k.params else None
    starred = [i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)]
    if starred and (index is None or index >= starred[0]):
        return UNKNOWN  # *args may hold it
    passed = next((kw.value for kw in call.keywords if kw.arg == name), None)
    if passed is None and index is not None and index < len(call.args):
        passed = call.args[index]
    if passed is None:
        if any(kw.arg is None for kw in call.keywords):
            return UNKNOWN  # **kwargs may hold it
        default = _default(k.node, name)
        return _literal(default) if default is not None else UNKNOWN
    return passed_value(launch, module, passed)


COMPARE = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
           ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
           ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b}


def _operand(flow, launch: Launch, node: ast.AST):
    if isinstance(node, ast.Name):
        return launch_constant(flow, launch, node.id)
    return _literal(node)


def truth(flow, launch: Launch, test: ast.AST):
    """Whether ``test`` holds in this launch's specialization: True, False, or None (lint cannot tell). Reads a
    constexpr name, ``not``, ``and``/``or`` (with what is unknown left unknown), and comparisons of constexprs
    and literals."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = truth(flow, launch, test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [truth(flow, launch, v) for v in test.values]
        decisive = isinstance(test.op, ast.Or)  # True decides an or, False an and
        if decisive in values:
            return decisive
        return None if None in values else not decisive
    if isinstance(test, ast.Compare):
        sides = [_operand(flow, launch, n) for n in [test.left, *test.comparators]]
        if UNKNOWN in sides or not all(type(op) in COMPARE for op in test.ops):
            return None
        try:
            return all(COMPARE[type(op)](a, b) for op, a, b in zip(test.ops, sides, sides[1:]))
        except TypeError:
            return None
    value = _operand(flow, launch, test) if isinstance(test, (ast.Name, ast.Constant)) else UNKNOWN
    return None if value is UNKNOWN else bool(value)


def _returns(branch: list[ast.stmt]) -> bool:
    return bool(branch) and isinstance(branch[-1], ast.Return)


def dead_for(flow, launch: Launch | None, node: ast.AST) -> bool:
    """``node`` is in no kernel this launch runs: it sits in the branch of an ``if`` on constexprs that the
    launch's values turn off (``if FUSED:`` with ``FUSED=0``), or after such an ``if`` whose branch taken ends in
    ``return``."""
    if launch is None:
        return False
    child = node
    for parent in flow.ancestors(node):
        if isinstance(parent, ast.If) and child is not parent.test:
            held = truth(flow, launch, parent.test)
            if held is not None and any(child is s for s in (parent.orelse if held else parent.body)):
                return True
        for block in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, block, None)
            if isinstance(stmts, list) and any(child is s for s in stmts):
                for s in stmts[:next(i for i, s in enumerate(stmts) if s is child)]:
                    held = truth(flow, launch, s.test) if isinstance(s, ast.If) else None
                    if held is not None and _returns(s.body if held else s.orelse):
                        return True
        child = parent
    return False
