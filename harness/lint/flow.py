"""Data flow inside one kernel, flow-insensitive and ``ast`` only.

``Flow.atoms(expr)`` says what an integer expression is built from, as a set of atoms:

- ``("pid",)``: a ``tl.program_id``; ``("loop", v)``: the loop variable ``v``;
- ``("arange", B)``: a ``tl.arange(0, B)`` (B is the source text of its length);
- ``("stride", B)``: something that varies by program or iteration, times ``B`` (``pid * BLOCK``,
  a ``range(0, n, BLOCK)`` loop variable, a pointer advanced by ``BLOCK * stride`` in a loop);
- ``("tile", B)``: an ``arange(0, B)`` added to a ``stride`` of the same ``B``: offsets that
  walk a tensor a block at a time, and so run past its end when the size is not a multiple;
- ``("load", line)``: a value read from memory; ``("param", name)``: a kernel argument.

``%`` and ``//`` by anything drop the arange and tile atoms (the result wraps into range, or is
compressed: lint cannot follow it). ``tl.minimum(offs, hi)`` and ``tl.clamp(offs, lo, hi)`` with a bound
the same for every lane turn a tile into ``("clamped", B)`` (it stays inside the bound), and so does
``tl.where(offs < n, offs, c)`` with ``n`` and ``c`` the same for every lane. Otherwise ``tl.where(c, a, b)``
takes its offsets from ``a`` and ``b``; ``c`` only says what it depends on.
``Flow.sources(expr)`` walks an expression and, through names, what they were assigned.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterator

from harness.lint.model import Kernel, Module

PIDLIKE = ("pid", "loop")
RANGES = ("range", "static_range")


def key(node: ast.AST) -> str:
    return ast.unparse(node)


class Reach:
    """Where a kernel's nodes sit and which assignments reach a use: the part of ``Flow`` that walks
    the tree. It needs ``self.fn``, ``self.parents`` and ``self.env`` (name -> [(value, extra)])."""

    def in_loop(self, node: ast.AST) -> bool:
        return any(isinstance(p, (ast.For, ast.While)) for p in self.ancestors(node))

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        node = self.parents.get(node)
        while node is not None:
            yield node
            node = self.parents.get(node)

    def sources(self, node: ast.AST, stop: Callable[[ast.AST], bool] = lambda n: False) -> Iterator[ast.AST]:
        """Every node of ``node`` and, through the names in it, of what they were assigned there
        (``reaching``: the assignments that can reach that use)."""
        seen, stack = set(), [node]
        while stack:
            n = stack.pop()
            yield n
            if stop(n):
                continue
            if isinstance(n, ast.Name) and n.id in self.env:
                for v in self.reaching(n):
                    if id(v) not in seen:
                        seen.add(id(v))
                        stack.append(v)
            else:
                stack.extend(ast.iter_child_nodes(n))

    def reaching(self, use: ast.Name) -> list[ast.expr]:
        """The values assigned to ``use.id`` that can reach this use: the last assignment before it in a
        block that encloses it (earlier ones are overwritten), any later-nested one before it (an ``if``
        may or may not run), and, inside a loop, the loop's own assignments after it (the next iteration).
        Before and after are the order of the statements (``position``), two on one line included."""
        cached = self._reaching.get(id(use))
        if cached is not None:
            return cached
        values = [v for v, _ in self.env.get(use.id, ())]
        if getattr(use, "lineno", None) is None or use not in self.parents:
            return values
        here = self.position(use)
        enclosing = set(map(id, self.ancestors(use)))
        loops = [a for a in self.ancestors(use) if isinstance(a, (ast.For, ast.While))]
        before = [v for v in values if self.position(v) < here and not self.returns_between(v, use)]
        dominating = [v for v in before if id(self.block_of(v)) in enclosing]
        last = max(dominating, key=self.position) if dominating else None
        out = [v for v in before if last is None or v is last or self.position(v) > self.position(last)]
        for loop in loops:
            out += [v for v in values if self.position(v) >= here and loop.lineno <= v.lineno <= loop.end_lineno]
        self._reaching[id(use)] = out
        return out

    def position(self, node: ast.AST) -> tuple[int, int]:
        """Where the statement that holds ``node`` starts: statements are ordered by it, two on one line
        (``a = ...; b = a | m``) by their columns."""
        stmt = node
        while stmt is not None and not isinstance(stmt, ast.stmt):
            stmt = self.parents.get(stmt)
        stmt = stmt or node
        return stmt.lineno, stmt.col_offset

    def returns_between(self, a: ast.AST, b: ast.AST) -> bool:
        """``a`` sits in a branch of an ``if`` that does not hold ``b`` and ends in ``return``: a program that ran
        ``a`` never gets to ``b``."""
        holds_b = set(map(id, self.ancestors(b)))
        child = a
        for node in self.ancestors(a):
            if id(node) in holds_b:
                return False
            if isinstance(node, ast.If):
                branch = node.body if any(child is s for s in node.body) else node.orelse
                if branch and isinstance(branch[-1], ast.Return):
                    return True
            child = node
        return False

    def block_of(self, value: ast.AST) -> ast.AST:
        """What holds the statement that assigns ``value``: the function, a loop, an ``if``, a ``with``."""
        stmt = self.parents.get(value, value)
        while stmt is not None and not isinstance(stmt, ast.stmt):
            stmt = self.parents.get(stmt)
        return self.parents.get(stmt, self.fn)



class Flow(Reach):
    def __init__(self, module: Module, kernel: Kernel):
        self.m, self.k, self.fn = module, kernel, kernel.node
        self.nodes = list(ast.walk(self.fn))  # every node of the kernel, walked once
        self.parents = {c: p for p in self.nodes for c in ast.iter_child_nodes(p)}
        self._calls: dict[str, list[ast.Call]] = {}
        for n in self.nodes:
            name = module.tl_call(n)
            if name:
                self._calls.setdefault(name, []).append(n)
        self.env: dict[str, list[tuple[ast.expr, frozenset]]] = {}
        self.loop_atoms: dict[str, frozenset] = {}
        self._memo: dict[int, frozenset] = {}
        self._open: set[int] = set()
        self._reaching: dict[int, list] = {}
        self._build()

    # ---------------------------------------------------------------- building

    def _build(self) -> None:
        for node in self.nodes:
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    self._bind(t, node.value, frozenset())
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                self._bind(node.target, node.value, frozenset())
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                value = ast.copy_location(ast.BinOp(node.target, node.op, node.value), node)
                self.parents[value] = node  # so that in_loop and ancestors see where it is
                extra = frozenset()
                if self.in_loop(node) and isinstance(node.op, ast.Add):
                    extra = frozenset(("stride", n.id) for n in ast.walk(node.value) if isinstance(n, ast.Name))
                self.env.setdefault(node.target.id, []).append((value, extra))
            elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
                self.loop_atoms[node.target.id] = self._loop(node)

    def _bind(self, target, value, extra) -> None:
        if isinstance(target, ast.Name):
            self.env.setdefault(target.id, []).append((value, extra))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, t in enumerate(target.elts):
                part = value.elts[i] if isinstance(value, (ast.Tuple, ast.List)) and i < len(value.elts) else value
                self._bind(t, part, extra)

    def _loop(self, node: ast.For) -> frozenset:
        atoms = {("loop", node.target.id)}
        it = node.iter
        if isinstance(it, ast.Call) and (self.m.tl_call(it) in RANGES or key(it.func) == "range"):
            if len(it.args) >= 3:
                atoms.add(("stride", key(it.args[2])))
            for a in it.args[:2]:
                atoms |= {x for x in self.atoms(a) if x[0] == "pid"}
        return frozenset(atoms)

    # ---------------------------------------------------------------- questions

    def atoms(self, node: ast.AST) -> frozenset:
        if id(node) not in self._memo:
            self._memo[id(node)] = frozenset(self._atoms(node))
        return self._memo[id(node)]

    def _atoms(self, node: ast.AST) -> set:
        if isinstance(node, ast.Name):
            return self._name(node.id, node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.BinOp):
            left, right = self.atoms(node.left), self.atoms(node.right)
            if isinstance(node.op, (ast.Mod, ast.FloorDiv)):  # wrapped, or compressed: no longer a block axis
                return {a for a in left | right if a[0] not in ("arange", "tile")} | {("wrapped",)}
            out = set(left | right)
            if isinstance(node.op, ast.Mult):
                for side, other in ((left, node.right), (right, node.left)):
                    if any(a[0] in PIDLIKE for a in side) and isinstance(other, (ast.Name, ast.Constant, ast.Attribute)):
                        out.add(("stride", key(other)))
            elif isinstance(node.op, (ast.Add, ast.Sub)):
                out |= promote(left, right)
            return out
        if isinstance(node, ast.Subscript):
            return set(self.atoms(node.value))
        out = set()
        for child in ast.iter_child_nodes(node):
            out |= self.atoms(child)
        return out

    def _name(self, name: str, use: ast.Name | None = None) -> set:
        """The atoms of what ``name`` holds where ``use`` reads it (every assignment when ``use`` is None)."""
        out = set(self.loop_atoms.get(name, ()))
        if name in self.k.params and name not in self.env:
            out.add(("param", name))
        values = self.env.get(name, ())
        if use is not None and values:
            reaching = {id(v) for v in self.reaching(use)}
            values = [(v, e) for v, e in values if id(v) in reaching]
        for value, extra in values:
            if id(value) in self._open:  # a definition that reaches itself (a loop): counted once
                continue
            self._open.add(id(value))
            try:
                out |= self.atoms(value) | extra
            finally:
                self._open.discard(id(value))
        out |= promote(out, out)
        return out

    def _call(self, node: ast.Call) -> set:
        name = self.m.tl_call(node)
        if name == "program_id":
            return {("pid",)}
        if name == "arange" and len(node.args) >= 2:
            lo, hi = node.args[0], node.args[1]
            length = key(hi) if isinstance(lo, ast.Constant) and lo.value == 0 else f"{key(hi)} - {key(lo)}"
            return {("arange", length)}
        if name == "load":
            return {("load", node.lineno)}
        if (name or "").startswith("atomic_"):  # the old value: a ticket differs from program to program
            return {("load", node.lineno), ("pid",)}
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("to", "cast") and name is None:
            return set(self.atoms(node.func.value))
        args = list(node.args) + [k.value for k in node.keywords]
        clamped = clamped_atoms(self, name, args) if name != "where" else where_clamp_atoms(self, node)
        if clamped is not None:
            return clamped
        out = set()
        if name == "where" and len(node.args) >= 3:  # the condition selects; it is no offset of the value
            out |= {a for a in self.atoms(args.pop(0)) if a[0] not in ("arange", "tile", "stride")}
        for a in args:
            out |= self.atoms(a)
        return out

    def calls(self, *names: str) -> Iterator[ast.Call]:
        """Every ``tl.<name>(...)`` call in the kernel, in source order."""
        found = [c for name in names for c in self._calls.get(name, ())]
        return iter(sorted(found, key=lambda c: (c.lineno, c.col_offset)) if len(names) > 1 else found)


def clamped_atoms(flow: Flow, name: str | None, args: list) -> set | None:
    """``tl.minimum(offs, hi)`` or ``tl.clamp(offs, lo, hi)`` with ``hi`` the same for every lane: the
    offsets no longer walk past ``hi`` whatever the block, so they are no tile (and no stride: read
    through a name they would make one again); their lanes still differ (the arange stays), marked
    ``("clamped", B)``. A bound that varies by lane (an arange in it) bounds nothing; ``tl.maximum``
    alone bounds from below only."""
    if name == "minimum" and len(args) == 2:
        pairs = [(args[0], args[1]), (args[1], args[0])]
    elif name == "clamp" and len(args) == 3:
        pairs = [(args[0], args[2])]
    else:
        return None
    for value, bound in pairs:
        walked, limit = flow.atoms(value), flow.atoms(bound)
        tiles = {a[1] for a in walked if a[0] == "tile"}
        if tiles and not any(a[0] in ("arange", "tile") for a in limit):
            rest = [a for a in args if a is not value]
            out = {a for a in walked if a[0] not in ("tile", "stride")} | {("clamped", b) for b in tiles}
            return out.union(*(flow.atoms(a) for a in rest))
    return None


def _bounded_above(flow: Flow, cond: ast.expr, value: str, depth: int = 0) -> bool | None:
    """Whether ``cond`` holds only for lanes where ``value`` (source text) is below a bound the same for every lane
    (True: ``value < n``, ``n > value``, ``value <= n - 1``, one side of an ``&``/``and``), holds only where it is at
    or past one (False: ``value >= n``), or neither (None). Through a name assigned once."""
    if isinstance(cond, ast.Name) and depth < 3:
        values = flow.env.get(cond.id, ())
        return _bounded_above(flow, values[0][0], value, depth + 1) if len(values) == 1 else None
    if isinstance(cond, ast.BinOp) and isinstance(cond.op, ast.BitAnd) or \
            isinstance(cond, ast.BoolOp) and isinstance(cond.op, ast.And):
        sides = [cond.left, cond.right] if isinstance(cond, ast.BinOp) else cond.values
        return True if any(_bounded_above(flow, c, value, depth) is True for c in sides) else None
    if not (isinstance(cond, ast.Compare) and len(cond.ops) == 1):
        return None
    left, op, right = cond.left, cond.ops[0], cond.comparators[0]
    if key(right) == value and not isinstance(op, (ast.Eq, ast.NotEq)):  # n > value: value < n
        left, right = right, left
        op = {ast.Gt: ast.Lt(), ast.GtE: ast.LtE(), ast.Lt: ast.Gt(), ast.LtE: ast.GtE()}[type(op)]
    if key(left) != value or any(a[0] in ("arange", "tile") for a in flow.atoms(right)):
        return None
    return True if isinstance(op, (ast.Lt, ast.LtE)) else False if isinstance(op, (ast.Gt, ast.GtE)) else None


def where_clamp_atoms(flow: Flow, node: ast.Call) -> set | None:
    """``tl.where(offs < n, offs, c)`` (or ``tl.where(offs >= n, c, offs)``) with ``n`` and ``c`` the same for
    every lane: a lane at or past the bound takes ``c``, the others stay below it, so the offsets no longer walk
    past the end whatever the block: a clamp, as ``tl.minimum(offs, n - 1)`` is (``("clamped", B)``)."""
    if len(node.args) < 3:
        return None
    cond, a, b = node.args[:3]
    for value, fallback, below in ((a, b, True), (b, a, False)):
        walked = flow.atoms(value)
        tiles = {t[1] for t in walked if t[0] == "tile"}
        if tiles and not any(t[0] in ("arange", "tile") for t in flow.atoms(fallback)) and \
                _bounded_above(flow, cond, key(value)) is below:
            kept = {t for t in flow.atoms(cond) if t[0] not in ("arange", "tile", "stride")}
            return {t for t in walked if t[0] not in ("tile", "stride")} | {("clamped", t) for t in tiles} | \
                flow.atoms(fallback) | kept
    return None


def promote(left, right) -> set:
    """``stride B`` on one side and ``arange B`` on the other make a ``tile B``."""
    strides = {a[1] for a in left | right if a[0] == "stride"}
    return {("tile", a[1]) for a in left | right if a[0] == "arange" and a[1] in strides and
            (("stride", a[1]) in left and a in right or ("stride", a[1]) in right and a in left or left is right)}


def arg(call: ast.Call, index: int, name: str) -> ast.expr | None:
    """The argument ``name`` of a call, given by keyword or at position ``index``."""
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return call.args[index] if len(call.args) > index else None


def flows(module: Module) -> list[Flow]:
    """One ``Flow`` per kernel of the module, built once and shared by every rule."""
    cached = getattr(module, "_flows", None)
    if cached is None:
        cached = module._flows = [Flow(module, k) for k in module.kernels.values()]
    return cached
