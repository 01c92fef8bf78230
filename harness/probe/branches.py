"""The size thresholds in a launcher's own branches, read from its source.

A launcher that takes another path past some size (``if M >= 2048``, ``BLOCK = 1024 if N >
512 else 256``, ``if x.shape[0] > 65535``) hides a bug behind that threshold: seeded sizes
around the defaults seldom cross it. ``thresholds(fn)`` parses the launcher with ``ast`` (and
the functions of its module it calls, one level deep) and returns the integer constants its
parameters and sizes are compared against, keyed by what is compared:

- a parameter's name (``n_cols``), which the probe's inputs pass by that name;
- ``"x.shape[0]"`` for a dimension of the tensor parameter ``x`` (``x.shape[i]``,
  ``x.size(i)``, ``len(x)``, and locals taken from them: ``M, N = x.shape``, ``n = x.size(-1)``);
- ``"x.numel()"`` for its element count.

``to_sizes(found, inputs, sizes)`` maps those keys back to make_inputs' size keywords: the
same name, or the size whose value at the defaults equals that dimension (every size that
does, when several do). Pure: nothing here imports torch.
"""

from __future__ import annotations

import ast
import inspect
import operator
import textwrap

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Pow: operator.pow,
        ast.LShift: operator.lshift, ast.FloorDiv: operator.floordiv}
_CMP = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


def thresholds(fn) -> dict[str, set[int]]:
    """key -> the integer constants it is compared against in ``fn`` and the module functions it calls."""
    fn = inspect.unwrap(fn)
    tree = _parse(fn)
    if tree is None:
        return {}
    params = [a.arg for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs]
    env = {p: ("param", p) for p in params}
    out: dict[str, set[int]] = {}
    _scan(tree, env, getattr(fn, "__globals__", {}), out, depth=1, module=getattr(fn, "__module__", None))
    return out


def to_sizes(found: dict[str, set[int]], inputs: dict, sizes: dict) -> dict[str, set[int]]:
    """The thresholds of ``found`` by make_inputs' size keyword (``inputs``: what make_inputs gave at
    the default ``sizes``). A key whose value matches no size is left out."""
    ints = {k: v for k, v in sizes.items() if isinstance(v, int) and not isinstance(v, bool)}
    out: dict[str, set[int]] = {}
    for key, ts in found.items():
        for name in _size_names(key, inputs, ints):
            out.setdefault(name, set()).update(ts)
    return out


def _size_names(key: str, inputs: dict, ints: dict) -> list[str]:
    if key in ints:
        return [key]
    value = _value(key, inputs)
    if value is None:
        return []
    return [k for k, v in ints.items() if v == value]


def _value(key: str, inputs: dict) -> int | None:
    """The value ``key`` has for ``inputs``: an int argument, a tensor's dimension or element count."""
    name, _, rest = key.partition(".")
    v = inputs.get(name)
    if not rest:
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    shape = getattr(v, "shape", None)
    if shape is None:
        return None
    if rest == "numel()":
        n = 1
        for d in shape:
            n *= int(d)
        return n
    try:
        return int(shape[int(rest[len("shape["):-1])])
    except (ValueError, IndexError):
        return None


def _parse(fn) -> ast.FunctionDef | None:
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None
    try:
        mod = ast.parse(src)
    except SyntaxError:
        return None
    node = mod.body[0] if mod.body else None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _const(node, globs: dict) -> int | None:
    """An integer constant expression (``2048``, ``2 ** 16``, ``-1``, a module-level int)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _const(node.operand, globs)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _const(node.left, globs), _const(node.right, globs)
        if a is None or b is None or (isinstance(node.op, (ast.Pow, ast.LShift)) and not 0 <= b < 64):
            return None
        try:
            return int(_OPS[type(node.op)](a, b))
        except ArithmeticError:
            return None
    if isinstance(node, ast.Name):
        v = globs.get(node.id)
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    return None


def _key(node, env: dict):
    """What ``node`` stands for: ("param", name), ("tensor", name), or ("dim", "x.shape[i]" / "x.numel()")."""
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("int", "len") \
            and len(node.args) == 1:
        if node.func.id == "int":
            return _key(node.args[0], env)
        t = _tensor(node.args[0], env)
        return ("dim", f"{t}.shape[0]") if t else None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
        t, i = _tensor(node.value.value, env), _const(node.slice, {})
        return ("dim", f"{t}.shape[{i}]") if t and i is not None else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        t = _tensor(node.func.value, env)
        if t and node.func.attr == "size" and len(node.args) == 1 and (i := _const(node.args[0], {})) is not None:
            return ("dim", f"{t}.shape[{i}]")
        if t and node.func.attr == "numel" and not node.args:
            return ("dim", f"{t}.numel()")
    return None


def _tensor(node, env: dict) -> str | None:
    """The parameter a tensor expression comes from (``x``, ``x.contiguous()``, ``x.view(...)``)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "contiguous", "float", "half", "to", "detach", "cuda"):
        node = node.func.value
    if isinstance(node, ast.Name) and (k := env.get(node.id)) is not None and k[0] in ("param", "tensor"):
        return k[1]
    return None


def _name(k) -> str | None:
    return None if k is None else k[1]


def _assign(target, value, env: dict) -> None:
    if isinstance(target, ast.Name):
        k = _key(value, env)
        if k is not None:
            env[target.id] = k
        elif (t := _tensor(value, env)) is not None:
            env[target.id] = ("tensor", t)
        elif target.id in env:
            del env[target.id]  # rebound to something else
        return
    if not isinstance(target, (ast.Tuple, ast.List)):
        return
    elts = target.elts
    if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(elts):
        for t, v in zip(elts, value.elts):
            _assign(t, v, env)
        return
    src = value.value if isinstance(value, ast.Attribute) and value.attr == "shape" else None
    if src is None and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr == "size" and not value.args:
        src = value.func.value
    t = _tensor(src, env) if src is not None else None
    if t is None:
        return
    star = next((i for i, e in enumerate(elts) if isinstance(e, ast.Starred)), None)
    for i, e in enumerate(elts):
        if isinstance(e, ast.Name):
            idx = i if star is None or i < star else i - len(elts)
            env[e.id] = ("dim", f"{t}.shape[{idx}]")


def _scan(tree, env: dict, globs: dict, out: dict, depth: int, module) -> None:
    """Walk ``tree`` in source order: assignments extend ``env``, comparisons go to ``out``, calls of
    the module's own functions are followed ``depth`` levels with their parameters bound."""
    for node in _in_order(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                _assign(t, node.value, env)
        elif isinstance(node, (ast.AnnAssign,)) and node.value is not None:
            _assign(node.target, node.value, env)
        elif isinstance(node, ast.Compare):
            _compare(node, env, globs, out)
        elif isinstance(node, ast.Call) and depth > 0 and isinstance(node.func, ast.Name):
            _follow(node, env, globs, out, depth, module)


def _in_order(tree):
    """Every node of ``tree`` (not of nested function definitions), in source order."""
    stack = list(reversed(list(ast.iter_child_nodes(tree))))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        kids = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.Assign):  # the value is read before the names are bound
            kids = [node.value] + [k for k in kids if k is not node.value]
        stack.extend(reversed(kids))


def _compare(node: ast.Compare, env: dict, globs: dict, out: dict) -> None:
    sides = [node.left, *node.comparators]
    for (a, b), op in zip(zip(sides, sides[1:]), node.ops):
        if not isinstance(op, _CMP):
            continue
        for x, c in ((a, b), (b, a)):
            k, v = _key(x, env), _const(c, globs)
            if k is not None and k[0] in ("param", "dim") and v is not None:
                out.setdefault(k[1], set()).add(v)


def _follow(call: ast.Call, env: dict, globs: dict, out: dict, depth: int, module) -> None:
    """A call of another plain function of the launcher's module: its thresholds, with its
    parameters bound to what the caller passed."""
    f = globs.get(call.func.id)
    if not inspect.isfunction(f) or getattr(f, "__module__", None) != module:
        return
    tree = _parse(f)
    if tree is None:
        return
    names = [a.arg for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs]
    inner: dict = {}
    bound = list(zip(names, call.args)) + [(kw.arg, kw.value) for kw in call.keywords if kw.arg in names]
    for p, arg in bound:
        k = _key(arg, env)
        if k is None and (t := _tensor(arg, env)) is not None:
            k = ("tensor", t)
        if k is not None:
            inner[p] = k
    _scan(tree, inner, getattr(f, "__globals__", globs), out, depth - 1, module)
