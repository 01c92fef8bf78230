"""Helpers that several rules share (not a rule: the leading ``_`` keeps it out of the registry)."""

from __future__ import annotations

import ast
import re
from collections import Counter
from typing import Iterator

from harness.lint.flow import Flow, arg
from harness.lint.model import Expr, Launch, Module, assignments, dotted

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
    """The kernel argument a pointer expression is based on (``x_ptr`` in ``x_ptr + offs``), if one. Not
    through a loaded value (an offset read from another tensor is not the base), nor past the base of a
    ``tl.make_block_ptr``; an argument advanced in place (``x_ptr += stride``) is still the base."""
    def stop(n: ast.AST) -> bool:
        return flow.m.tl_call(n) == "load" or (flow.m.tl_call(n) or "").startswith("atomic_")

    def base_only(n: ast.AST) -> ast.AST:
        return arg(n, 0, "base") if flow.m.tl_call(n) == "make_block_ptr" and arg(n, 0, "base") is not None else n

    def advanced(name: str) -> bool:  # every assignment of the name is the name itself plus or minus something
        return all(isinstance(v, ast.BinOp) and isinstance(v.op, (ast.Add, ast.Sub)) and isinstance(v.left, ast.Name)
                   and v.left.id == name for v, _ in flow.env.get(name, ()))

    found = []
    for n in flow.sources(pointer, lambda x: stop(x) or base_only(x) is not x):
        if base_only(n) is not n:
            found += [b for b in flow.sources(base_only(n), stop)]
        elif not stop(n):
            found.append(n)
    names = [n.id for n in found if isinstance(n, ast.Name) and n.id in flow.k.params
             and (n.id not in flow.env or advanced(n.id)) and n.id not in flow.k.constexprs]
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


def per_block(fn):
    """Memoize ``fn(flow, block)`` on the flow: it reads the whole file, and rules ask it for every access."""
    def cached(flow: Flow, block: str) -> bool:
        memo = flow.__dict__.setdefault(f"_{fn.__name__}", {})
        if block not in memo:
            memo[block] = fn(flow, block)
        return memo[block]
    cached.__doc__, cached.__name__ = fn.__doc__, fn.__name__
    return cached


@per_block
def exact_width(flow: Flow, block: str) -> bool:
    """The block size ``block`` is (as far as lint can tell) a whole axis, not a block of it: it is 1, every launch
    passes a tensor's own size for it (or 1), or it has no block-like name (``D``, ``HEAD_DIM``) and no launch
    rounds it up (``next_power_of_2``)."""
    launches = flow.k.launches
    if block == "1" or launches and all(block in l.args and (from_shape(l, l.args[block]) or module_int(
            flow.m, l.resolve(l.args[block])) == 1) for l in launches):
        return True
    if flow.k.autotune is not None and flow.k.autotune.values.get(block) == {1}:  # every config fixes it to 1
        return True
    if BLOCKISH.search(block):
        return False
    return not any(block in l.args and "next_power_of_2" in ast.unparse(l.args[block]) for l in launches)


INT64 = ("int64", "uint64")


def widened(flow: Flow, node: ast.AST) -> bool:
    """``x.to(tl.int64)`` / ``tl.cast(x, tl.int64)`` / ``x.to(tl.uint64)``, or a wrapper that returns its tl call
    cast so (``tle.program_id(0)``): a 64-bit value."""
    if flow.m.cast_of(node) in INT64:
        return True
    if isinstance(node, ast.Call) and node.args:
        target = node.args[-1] if flow.m.tl_call(node) == "cast" else node.args[0] \
            if isinstance(node.func, ast.Attribute) and node.func.attr == "to" else None
        return target is not None and ast.unparse(target).rsplit(".", 1)[-1] in INT64
    return False


def int64_params(flow: Flow) -> set[str]:
    """The kernel's arguments annotated 64-bit (``M: tl.int64``): Triton passes them as int64 whatever their value."""
    fn = flow.k.node
    return {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
            if a.annotation is not None and dotted(a.annotation).rsplit(".", 1)[-1] in INT64}


def int32_products(flow: Flow, expr: ast.AST, narrow: frozenset = frozenset()):
    """``a * b`` in ``expr`` (through names) where ``a`` comes from a program id with no 64-bit cast on the way
    and ``b`` is a runtime (not constexpr) kernel argument that is not a pointer and not annotated ``tl.int64``:
    an int32 product. ``narrow``: pointer arguments known to hold integers of 32 bits or fewer (the probe knows
    the launch's tensors; lint does not): a value ``tl.load`` reads through one (an index map's destination row)
    is int32 too, whatever the width of the address it was read at."""
    wide = int64_params(flow)

    def int32_source(s: ast.AST) -> bool:
        if widened(flow, s):
            return False
        call = flow.m.tl_call(s)
        return call == "program_id" or (call == "load" and bool(narrow and s.args)
                                         and pointer_param(flow, s.args[0]) in narrow)
    for n in flow.sources(expr, lambda x: widened(flow, x)):
        if not (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)):
            continue
        for side, other in ((n.left, n.right), (n.right, n.left)):
            runtime = isinstance(other, ast.Name) and other.id in flow.k.params and other.id not in wide and \
                other.id not in flow.k.constexprs and "ptr" not in other.id.lower() and other.id not in flow.env
            if runtime and any(int32_source(s) for s in flow.sources(side, lambda x: widened(flow, x))):
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


def _norm(name: str) -> str:
    return name.lower().strip("_")


def literal_values(launch: Launch, module: Module, node: ast.AST, depth: int = 0) -> set[int] | None:
    """The ints ``node`` can be at the launch (``64 if ne else 512``, a name assigned such, a module constant);
    None when any of them is not a literal."""
    node = launch.resolve(node) if depth < 3 else node
    if isinstance(node, ast.IfExp):
        a, b = literal_values(launch, module, node.body, depth + 1), literal_values(launch, module, node.orelse, depth + 1)
        return a | b if a is not None and b is not None else None
    value = module_int(module, node)
    return {value} if value else None


def remainder_tests(module: Module) -> list[tuple[str, int | None]]:
    """Every ``x % d == 0`` (or ``!= 0``) outside the kernels, in an assert, an ``if``, a ``return``, anywhere:
    (the divisor's name, lower case without leading underscores; its int value where it is one). Memoized."""
    cached = getattr(module, "_remainder_tests", None)
    if cached is None:
        inside = {id(n) for k in module.kernels.values() for n in ast.walk(k.node)}
        cached = module._remainder_tests = []
        for n in module.nodes:
            if isinstance(n, ast.Compare) and id(n) not in inside and len(n.ops) == 1 and \
                    isinstance(n.ops[0], (ast.Eq, ast.NotEq)) and is_zero(n.comparators[0]) and \
                    isinstance(n.left, ast.BinOp) and isinstance(n.left.op, ast.Mod):
                cached.append((_norm(ast.unparse(n.left.right)), module_int(module, n.left.right)))
    return cached


@per_block
def divisibility_checked(flow: Flow, block: str) -> bool:
    """The file tests that a size is a multiple of this block (``assert M % BLOCK_M == 0``, ``if K % 128 != 0:
    fall back``, ``return K % _BLOCK_K == 0`` in the function that picks this kernel): the author keeps the last
    block whole. The divisor is the block's name, the name or value the launches pass for it (or, for a tuned
    block, the expression its autotune configs give it: ``TritonConfig.BLOCK_K``), or a multiple of every
    literal value they pass (or its literal configs give it); or the kernel's ``early_config_prune`` keeps only
    configs whose block divides an argument (``Autotune.divides``)."""
    def asserts(root: ast.AST, names: set[str]) -> bool:
        return any(isinstance(n, (ast.Assert, ast.If)) and any(
            isinstance(b, ast.BinOp) and isinstance(b.op, ast.Mod) and ast.unparse(b.right).lower() in names
            for b in ast.walk(n.test)) for n in ast.walk(root))

    launches = flow.k.launches
    tuned = flow.k.autotune.values.get(block, set()) if flow.k.autotune is not None else set()
    names = {_norm(block)} | {_norm(ast.unparse(l.args[block])) for l in launches if block in l.args} | {
        _norm(v) for v in tuned if isinstance(v, Expr)}  # the config's own expression: TritonConfig.BLOCK_K
    configs = tuned if tuned and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in tuned) else None
    values = [literal_values(l, flow.m, l.args[block]) if block in l.args else configs for l in launches]
    known = set().union(*values) if launches and all(v is not None for v in values) else set()
    for divisor, value in remainder_tests(flow.m):
        if divisor in names or value and known and all(value % v == 0 for v in known):
            return True
    at = flow.k.autotune
    if at is not None and at.benchmarks and block in at.divides and not any(block in l.args for l in launches):
        return True  # the autotuner's pruning keeps only configs whose block divides the size
    if not launches:  # launched from elsewhere (a wrapper, a namespace): an assert anywhere in the file counts
        kernels = {id(k.node) for k in flow.m.kernels.values()}
        return any(asserts(fn, {block.lower()}) for fn in flow.m.functions.values() if id(fn) not in kernels)
    return all(l.launcher is not None and asserts(l.launcher, {block.lower()} | (
        {ast.unparse(l.args[block]).lower()} if block in l.args else set())) for l in launches)


def axis_blocks(flow) -> dict[int, set[str]]:
    """For each grid axis, the block sizes the kernel multiplies ``tl.program_id(axis)`` by (memoized)."""
    if "_axis_blocks" in flow.__dict__:
        return flow._axis_blocks
    flow._axis_blocks = _axis_blocks(flow)
    return flow._axis_blocks


def _axis_blocks(flow) -> dict[int, set[str]]:
    pid_names = {}
    for name, values in flow.env.items():
        if len(values) == 1 and flow.m.tl_call(values[0][0]) == "program_id":
            pid_names[name] = values[0][0]
    out: dict[int, set[str]] = {}
    for node in flow.nodes:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for side, other in ((node.left, node.right), (node.right, node.left)):
                call = pid_names.get(side.id) if isinstance(side, ast.Name) else side
                if flow.m.tl_call(call) == "program_id" and isinstance(other, ast.Name):
                    axis = call.args[0] if call.args else next((k.value for k in call.keywords), None)
                    if isinstance(axis, ast.Constant) and other.id in flow.k.constexprs:
                        out.setdefault(axis.value, set()).add(other.id)
    return out


def strides_over(flow, launch, axis: int, grid: list) -> bool:
    """The kernel loops with a step of the program count on that axis (``tl.num_programs(axis)``, or an argument
    the launch passes the grid's own value for: ``GRID=grid``), a grid-stride or persistent kernel: whatever the
    number of programs, together they cover the axis."""
    own = {ast.unparse(grid[axis]), ast.unparse(launch.resolve(grid[axis]))}
    for loop in (n for n in flow.nodes if isinstance(n, ast.For) and isinstance(n.iter, ast.Call) and len(n.iter.args) >= 3):
        for c in flow.sources(loop.iter.args[2]):
            if flow.m.tl_call(c) == "num_programs":
                which = c.args[0] if c.args else next((k.value for k in c.keywords), None)
                if isinstance(which, ast.Constant) and which.value == axis:
                    return True
            elif isinstance(c, ast.Name) and c.id in launch.args and ast.unparse(launch.args[c.id]) in own:
                return True
    return False


def masked_blocks(flow: Flow) -> set[str]:
    """The block sizes whose ``tl.arange`` some mask of the kernel compares: axes it knows can be partial."""
    cached = getattr(flow, "_masked_blocks", None)
    if cached is None:
        cached = flow._masked_blocks = {a[1] for _, _, _, mask in memory_ops(flow) if not is_none(mask)
                                        for a in flow.atoms(mask) if a[0] in ("arange", "tile")}
    return cached


def unused_sizes(flow: Flow) -> list[str]:
    """Runtime scalar arguments the kernel never reads (not pointers, strides or constexprs): ``n`` in a
    vector add that forgot its mask."""
    used = {n.id for n in flow.nodes if isinstance(n, ast.Name)}
    return [p for p in flow.k.params if p not in used and p not in flow.k.constexprs and "ptr" not in p.lower()
            and "stride" not in p.lower() and not p.startswith("_")]


def rounds_up(node: ast.AST) -> bool:
    """``cdiv(a, b)`` or ``(a + b - 1) // b`` somewhere in ``node``: a count that includes a partial block."""
    return any(isinstance(n, ast.Call) and ast.unparse(n.func).endswith("cdiv") or
               isinstance(n, ast.BinOp) and isinstance(n.op, ast.FloorDiv) and isinstance(n.left, ast.BinOp)
               and isinstance(n.left.op, (ast.Add, ast.Sub)) for n in ast.walk(node))


def stepping_loops(flow: Flow, pointer: ast.AST, block: str) -> set[str]:
    """The loop variables of the address that step it by ``block``: ``range(0, n, block)``, or the variable times
    ``block`` (``k * BLOCK_K + tl.arange(0, BLOCK_K)``). A loop over the groups of a fixed layout
    (``blk * 128 + g * 32 + tl.arange(0, 32)`` over ``blk``) steps by another size, and is no evidence."""
    variables = {a[1] for a in flow.atoms(pointer) if a[0] == "loop"}
    loops = {n.target.id: n for n in flow.nodes if isinstance(n, ast.For) and isinstance(n.target, ast.Name)}
    out = set()
    for v in variables:
        it = getattr(loops.get(v), "iter", None)
        if isinstance(it, ast.Call) and len(it.args) >= 3 and ast.unparse(it.args[2]) == block:
            out.add(v)
    for n in flow.sources(pointer):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
            for side, other in ((n.left, n.right), (n.right, n.left)):
                if ast.unparse(other) == block:
                    out |= {x.id for x in ast.walk(side) if isinstance(x, ast.Name) and x.id in variables}
    return out


def partial_block_evidence(flow: Flow, call: ast.AST, block: str) -> str | None:
    """How the file shows that the block axis ``block`` can end in a partial block. ``"strong"``: a launch's
    grid axis for it rounds up (``cdiv``), or a loop that steps the access by ``block`` (``stepping_loops``, or
    it advances the pointer by it) runs to a runtime argument or counts with cdiv. ``"weak"``: only the kernel
    itself says so: it masks that axis elsewhere, or counts its tiles with ``tl.cdiv(N, block)`` (buffers
    padded to whole blocks, such as MoE's sorted token ids, look the same). None: no evidence."""
    pointer = call.args[0] if getattr(call, "args", None) else call
    touched = stepping_loops(flow, pointer, block) | {
        n.target.id for n in flow.nodes if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)
        and any(isinstance(x, ast.Name) and x.id == block for x in ast.walk(n.value))}
    for loop in (a for a in flow.ancestors(call) if isinstance(a, ast.For)):
        it = loop.iter
        steps = isinstance(loop.target, ast.Name) and loop.target.id in touched or any(
            isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id in touched
            for n in ast.walk(loop))
        if steps and isinstance(it, ast.Call) and it.args and (rounds_up(it) or len(it.args) >= 2 and any(
                isinstance(n, ast.Name) and n.id in flow.k.params and n.id not in flow.k.constexprs
                for n in ast.walk(it.args[1]))) and not whole_range(flow, it, block) and \
                not launched_multiple(flow, it, block):
            return "strong"
    axes = [axis for axis, blocks in axis_blocks(flow).items() if block in blocks]
    for launch in flow.k.launches:
        grid = launch.grid_axes() or []
        if any(axis < len(grid) and rounds_up(launch.resolve(grid[axis])) and not whole_cdiv(launch, flow.m, grid[axis])
               for axis in axes):
            return "weak" if whole_blocks_exit(flow, block) else "strong"
    if block in masked_blocks(flow) or any(
            flow.m.tl_call(n) == "cdiv" and len(n.args) == 2 and ast.unparse(n.args[1]) == block for n in flow.nodes):
        return "weak"
    return None


def _bound(flow: Flow, node: ast.AST, depth: int = 0) -> ast.AST:
    """A name assigned once in the kernel, replaced by its value (a few levels)."""
    while depth < 4 and isinstance(node, ast.Name) and len(flow.env.get(node.id, ())) == 1:
        node, depth = flow.env[node.id][0][0], depth + 1
    return node


def _rounded_down(flow: Flow, node: ast.AST, block: str) -> str | None:
    """``X`` when ``node`` is ``X // B * B``, ``(X // B) * B`` or ``X - X % B`` (B the block): X rounded down to
    whole blocks."""
    node = _bound(flow, node)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        for a, b in ((node.left, node.right), (node.right, node.left)):
            a = _bound(flow, a)
            if ast.unparse(b) == block and isinstance(a, ast.BinOp) and isinstance(a.op, ast.FloorDiv) and \
                    ast.unparse(a.right) == block:
                return ast.unparse(a.left)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        r = _bound(flow, node.right)
        if isinstance(r, ast.BinOp) and isinstance(r.op, ast.Mod) and ast.unparse(r.right) == block and \
                ast.unparse(r.left) == ast.unparse(node.left):
            return ast.unparse(node.left)
    return None


def _whole_start(flow: Flow, node: ast.AST | None, block: str) -> bool:
    """A start that is a whole number of blocks: absent, 0, the block, a literal multiple, ``k * block``."""
    node = _bound(flow, node) if node is not None else None
    if node is None or isinstance(node, ast.Constant) and node.value == 0 or ast.unparse(node) == block:
        return True
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and block in (
        ast.unparse(node.left), ast.unparse(node.right))


def whole_range(flow: Flow, it: ast.Call, block: str) -> bool:
    """``range(start, stop, block)`` that walks whole blocks only, the tail peeled off before or after the loop:
    ``range(N % B, N, B)`` (the first, partial block done apart), ``range(0, N // B * B, B)`` or
    ``range(B, N - N % B, B)`` (the last one done apart). The loop's accesses never pass ``stop``. Or a count of
    blocks rounded down, ``range(N // B)`` or ``range(s, N // B)``, whose index the access multiplies by ``B``
    (the loops that ``partial_block_evidence`` weighs step by the block): block ``k < N // B`` ends at
    ``(k + 1) * B <= N``, whole (what the floor drops is the tail, left undone, not read past)."""
    if 1 <= len(it.args) <= 2:
        stop = _bound(flow, it.args[-1])
        return isinstance(stop, ast.BinOp) and isinstance(stop.op, ast.FloorDiv) and ast.unparse(stop.right) == block
    if len(it.args) != 3 or ast.unparse(it.args[2]) != block:
        return False
    start, stop = it.args[0], it.args[1]
    s = _bound(flow, start)
    if isinstance(s, ast.BinOp) and isinstance(s.op, ast.Mod) and ast.unparse(s.right) == block and \
            ast.unparse(s.left) in (ast.unparse(_bound(flow, stop)), ast.unparse(stop)):
        return True
    return _rounded_down(flow, stop, block) is not None and _whole_start(flow, start, block)


def launched_multiple(flow: Flow, it: ast.Call, block: str) -> bool:
    """A loop to a kernel argument that every launch passes as a whole number of blocks: ``range(0, K, BLOCK_K)``
    (or ``range(tl.cdiv(K, BLOCK_K))``) where each launch passes ``K`` as a product with the value it passes for
    ``BLOCK_K`` as a factor (``K = n_groups * GROUP`` and ``BLOCK_K=GROUP``). The last block is whole. A size
    only checked by ``K // GROUP`` is not one (the floor drops a remainder)."""
    args = it.args
    if len(args) == 3 and ast.unparse(args[2]) == block and _whole_start(flow, args[0], block):
        stop = _bound(flow, args[1])
    elif 1 <= len(args) <= 2 and (len(args) == 1 or isinstance(args[0], ast.Constant) and args[0].value == 0):
        stop = _bound(flow, args[-1])
        if not (flow.m.tl_call(stop) == "cdiv" and len(stop.args) == 2 and ast.unparse(stop.args[1]) == block):
            return False
        stop = _bound(flow, stop.args[0])
    else:
        return False
    if not (isinstance(stop, ast.Name) and stop.id in flow.k.params and stop.id not in flow.env):
        return False
    launches = flow.k.launches
    return bool(launches) and all(
        stop.id in l.args and whole_rows(flow, l, product(l, l.home or flow.m, l.args[stop.id]), block, 1)
        for l in launches)


def whole_cdiv(launch: Launch, module: Module, axis: ast.AST) -> bool:
    """The grid axis is ``cdiv(512, bd)`` with a literal extent and block sizes that all divide it
    (``bd = 64 if ne else 512``): a fixed layout cut into whole blocks, never a partial one."""
    calls = [n for n in ast.walk(launch.resolve(axis)) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("cdiv")]
    for call in calls:
        extent = literal_values(launch, module, call.args[0]) if len(call.args) == 2 else None
        blocks = literal_values(launch, module, call.args[1]) if len(call.args) == 2 else None
        if blocks is None and len(call.args) == 2:
            blocks = tuned_values(launch, call.args[1])
        if not (extent and blocks and len(extent) == 1 and all(next(iter(extent)) % b == 0 for b in blocks)):
            return False
    return bool(calls)


def tuned_values(launch: Launch, node: ast.AST) -> set[int] | None:
    """``meta["BLOCK"]`` in an autotuned kernel's grid: every value its literal configs give BLOCK."""
    at = launch.kernel.autotune
    if at is None or not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)):
        return None
    values = at.values.get(node.slice.value)
    return values if values and all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values) else None


def whole_blocks_exit(flow: Flow, block: str) -> bool:
    """The kernel returns early when its block starts past a bound (``if pid_m * BLOCK_M >= num_post: return``):
    it runs whole blocks up to a count it reads, the way MoE kernels walk token ids padded to whole blocks,
    and never masks the tail itself. Weaker evidence that the last block can be partial (TL106)."""
    for n in flow.nodes:
        if isinstance(n, ast.If) and n.body and isinstance(n.body[-1], ast.Return) and isinstance(n.test, ast.Compare) \
                and isinstance(n.test.ops[0], (ast.GtE, ast.Gt)) and ("stride", block) in flow.atoms(n.test.left):
            return True
    return False


ALLOCATORS = ("empty", "zeros", "ones", "full", "empty_strided", "new_empty", "new_zeros", "new_full")


def allocation(launch: Launch, param: str) -> ast.Call | None:
    """The ``torch.empty(...)`` (or zeros, full, ...) call the launch's launcher makes the tensor it passes for
    ``param`` with, if it makes it so (the assignment that reaches the launch: ``Launch.reaching``)."""
    passed = launch.args.get(param)
    value = launch.reaching(passed.id) if isinstance(passed, ast.Name) else None
    if isinstance(value, ast.Call) and dotted(value.func).rsplit(".", 1)[-1] in ALLOCATORS and value.args:
        return value
    return None


class Product:
    """A size as a product: the source texts of its factors that are no number (with their counts) and the
    product of those that are. ``a * b * 64`` holds ``a * 32``'s factors: ``a``, and 32 divides 64."""

    def __init__(self, names: Counter | None = None, number: int = 1):
        self.names, self.number = names if names is not None else Counter(), number

    def __mul__(self, other: "Product") -> "Product":
        return Product(self.names + other.names, self.number * other.number)

    def without(self, part: "Product") -> "Product | None":
        """This product divided by ``part`` when ``part``'s factors are among its own, else None."""
        if part.number == 0 or self.number % part.number or any(self.names[n] < c for n, c in part.names.items()):
            return None
        return Product(self.names - part.names, self.number // part.number)


def product(launch: Launch, module: Module, node: ast.AST, at: ast.AST | None = None, depth: int = 0) -> Product:
    """``node``, a size in the launcher read at ``at`` (the launch when None), as a ``Product``: through ``*``, and
    through names where it reads them (``part = B * n_split * block_q``; ``torch.empty(part * D)``:
    ``Launch.reaching``); a name bound to an int, or a module constant, is that number; anything else (a launcher's
    parameter it never rebinds, ``x.shape[1]``, a sum) is one factor, and a name the launcher binds in a way lint
    cannot follow to that point matches nothing."""
    at = launch.node if at is None else at
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return product(launch, module, node.left, at, depth) * product(launch, module, node.right, at, depth)
    fn = launch.launcher
    if isinstance(node, ast.Name) and fn is not None and node.id in assignments(fn):
        bound = launch.reaching(node.id, at) if depth < 4 else None
        if bound is None or node.id in {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}:
            return Product(Counter({f"{node.id}@{id(at)}": 1}))  # rebound where lint cannot follow: itself only
        return product(launch, module, bound, bound, depth + 1)
    number = module_int(module, node) if not (fn is not None and isinstance(node, ast.Name) and node.id in {
        a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}) else None
    return Product(number=number) if number is not None else Product(Counter({ast.unparse(node): 1}))


def extent_dims(call: ast.Call) -> list[ast.AST]:
    """The sizes whose product is the number of elements an allocation holds: a shape tuple's items, or
    ``torch.empty``'s / ``zeros``' / ``ones``' positional sizes; the first argument alone for the others (``full``'s
    second is the fill value). None for ``empty_strided`` (its strides may spread the elements)."""
    name = dotted(call.func).rsplit(".", 1)[-1]
    if name == "empty_strided":
        return []
    if isinstance(call.args[0], (ast.Tuple, ast.List)):
        return list(call.args[0].elts)
    return list(call.args) if name in ("empty", "zeros", "ones") else [call.args[0]]


def addends(flow: Flow, node: ast.AST, depth: int = 0) -> list[ast.AST]:
    """The addends of an address (``base + rows[:, None] * s + cols[None, :]``), through names that one
    assignment reaches."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return addends(flow, node.left, depth) + addends(flow, node.right, depth)
    if isinstance(node, ast.Name) and node.id in flow.env and depth < 8:
        values = flow.reaching(node)
        if len(values) == 1:
            return addends(flow, values[0], depth + 1)
    return [node]


def _bare(flow: Flow, node: ast.AST) -> ast.AST:
    """``node`` without ``[:, None]`` and through a name assigned once in the kernel."""
    for _ in range(6):
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Name) and len(flow.env.get(node.id, ())) == 1:
            node = flow.env[node.id][0][0]
        else:
            break
    return node


def tile_stride(flow: Flow, pointer: ast.AST, block: str) -> ast.AST | int | None:
    """What the address multiplies its ``tl.arange(0, block)`` lanes by: 1 when they are added as they are (the
    block walks the buffer's contiguous elements), the scalar ``s`` of ``lanes[:, None] * s`` (it walks rows ``s``
    long), None when lint cannot tell (two different ones, a product of several)."""
    found = set()
    for term in addends(flow, pointer):
        if ("arange", block) not in flow.atoms(term):
            continue
        bare = _bare(flow, term)
        if not (isinstance(bare, ast.BinOp) and isinstance(bare.op, ast.Mult)):
            found.add(1)
            continue
        sides = [(bare.left, bare.right), (bare.right, bare.left)]
        lanes = [(a, b) for a, b in sides if ("arange", block) in flow.atoms(a) and ("arange", block) not in
                 flow.atoms(b) and isinstance(b, (ast.Name, ast.Constant))]
        inner = _bare(flow, lanes[0][0]) if len(lanes) == 1 else None
        if inner is None or isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Mult):
            return None
        found.add(ast.unparse(lanes[0][1]))
    return found.pop() if len(found) == 1 else None


def whole_rows(flow: Flow, launch: Launch, sizes: Product, block: str, stride) -> bool:
    """A buffer of ``sizes`` elements holds a whole number of ``block``-long tiles laid out ``stride`` apart: its
    size is a product with, among its factors, the value the launch passes for the block and, apart, the one it
    passes for the stride (a number, or a kernel argument the launch gives)."""
    module = launch.home or flow.m
    passed = launch.args.get(block)
    if passed is None or isinstance(passed, ast.Starred) or stride is None:
        return False
    rest = sizes.without(product(launch, module, passed))
    if rest is None or stride == 1:
        return rest is not None
    value = int(stride) if stride.isdigit() else launch.args.get(stride)
    if value is None or isinstance(value, ast.Starred):
        return False
    return rest.without(Product(number=value) if isinstance(value, int) else product(launch, module, value)) is not None


def padded_allocation(flow: Flow, param: str | None, block: str | None = None, pointer: ast.AST | None = None) -> bool:
    """Every launch passes for ``param`` a tensor its launcher allocates whole blocks of: with a shape that names a
    padded size (``M_padded``, ``pad_m``) or rounds up (``cdiv(n, B) * B``, or ``blocks * B`` with ``blocks =
    cdiv(n, B)``), or (given the ``block`` an access at ``pointer`` walks by) whose number of elements is a product
    with the value the launch passes for that block as a factor (``torch.empty(B * H * n_split * block_g)`` with
    ``BLOCK_G=block_g``) and, where the access walks rows (``lanes[:, None] * D``), the row's length as another
    (``torch.empty(part * D)``, ``D=D``). The buffer holds a whole number of blocks, so a block that starts inside
    it ends inside it: the extra lanes of the last block, read or written, stay inside the buffer."""
    launches = flow.k.launches
    if not launches or param is None:
        return False
    stride = tile_stride(flow, pointer, block) if block is not None and pointer is not None else None
    for launch in launches:
        value = allocation(launch, param)
        if value is None:
            return False
        shape = value.args[0]
        names = {n.id.lower() for n in ast.walk(shape) if isinstance(n, ast.Name)}
        counts = rounds_up(shape) or any(rounds_up(launch.resolve(n)) for n in ast.walk(shape) if isinstance(n, ast.Name))
        padded = any("pad" in n for n in names) or counts and any(
            isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) for n in ast.walk(shape))
        dims = extent_dims(value)
        sizes = Product()
        for d in dims:
            sizes = sizes * product(launch, launch.home or flow.m, d, value)
        if not (padded or dims and whole_rows(flow, launch, sizes, block, stride)):
            return False
    return True
