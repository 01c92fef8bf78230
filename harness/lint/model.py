"""What ``lint`` reads from one Python file, with ``ast`` only: the kernels and their launches.

Nothing here imports the user's code, torch or Triton. A *kernel* is a function decorated
with ``@triton.jit`` (also under ``@triton.autotune`` / ``@triton.heuristics``, or wrapped
as ``name = triton.jit(fn)``); a *launch* is ``kernel[grid](...)`` anywhere in the same file,
and the function it sits in is its *launcher*.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from harness.lint.names import Names, dotted, parse  # noqa: F401  (dotted, parse: imported from here too)


@dataclass
class Autotune:
    """The ``@triton.autotune(...)`` of a kernel, as far as it can be read literally."""

    node: ast.Call
    key: list[str] | None  # None: not a literal list
    reset_to_zero: list[str] = field(default_factory=list)
    restore_value: list[str] = field(default_factory=list)
    tuned: set[str] = field(default_factory=set)  # the Config kwargs' names
    prune: str | None = None  # the name of the early_config_prune function
    hooked: set[str] = field(default_factory=set)  # names a Config's pre_hook resets (init_to_zero(["a_ptr"]))
    opaque_hook: bool = False  # some pre_hook lint cannot read: it may reset anything
    single: bool = False  # configs= is (as lint reads it) one Config: the autotuner never benchmarks
    values: dict[str, set] = field(default_factory=dict)  # a tuned name -> every literal value its configs give it
    divides: dict[str, str] = field(default_factory=dict)  # a tuned block -> the argument the pruning keeps it dividing

    @property
    def benchmarks(self) -> bool:
        """The first call for a key launches every config to time it (Triton skips that for one config)."""
        return not self.single

    def resets(self, name: str) -> bool:
        """The autotuner (or a config's pre_hook) puts ``name`` back before each launch."""
        return name in self.reset_to_zero or name in self.restore_value or name in self.hooked or self.opaque_hook


@dataclass
class Kernel:
    name: str
    node: ast.FunctionDef
    params: list[str]
    constexprs: set[str]
    autotune: Autotune | None = None
    heuristics: set[str] = field(default_factory=set)
    launches: list["Launch"] = field(default_factory=list)


@dataclass
class Launch:
    """``kernel[grid](args)`` in ``launcher`` (None at module level)."""

    kernel: Kernel
    node: ast.Call
    grid: ast.expr
    launcher: ast.FunctionDef | None
    args: dict[str, ast.expr]  # kernel parameter -> the expression passed
    home: "Module | None" = None  # the module the launch is in, when not the kernel's (harness/lint/project.py)

    def grid_axes(self) -> list[ast.expr] | None:
        """The grid's axes as expressions (a lambda's body; a name assigned a tuple), or None."""
        grid = self.resolve(self.grid)
        if isinstance(grid, ast.Lambda):
            grid = grid.body
        if isinstance(grid, (ast.Tuple, ast.List)):
            return list(grid.elts)
        return None

    def resolve(self, node: ast.expr) -> ast.expr:
        """A name assigned once in the launcher, replaced by what it was assigned."""
        if isinstance(node, ast.Name) and self.launcher is not None:
            values = assignments(self.launcher).get(node.id, [])
            if len(values) == 1:
                return values[0]
        return node

    def reaching(self, name: str, at: ast.AST | None = None) -> ast.expr | None:
        """What ``name`` holds at the launch (or at the node ``at`` of the launcher): ``reaching``."""
        return reaching(self.launcher, name, self.node if at is None else at) if self.launcher is not None else None


def reaching(fn: ast.AST, name: str, at: ast.AST) -> ast.expr | None:
    """What ``name`` holds at the node ``at`` of the function ``fn``, where ``fn`` assigns it more than once: the last
    assignment before ``at`` in a block that holds ``at`` (``part = ...`` in the function's body after another
    ``part = ...`` in an ``if`` branch that returned), when no assignment after it (before ``at``, in a branch, or
    later in a loop around ``at``) may rebind it; the one assignment when there is one. None when lint cannot tell."""
    values = assignments(fn).get(name, [])
    if len(values) <= 1:
        return values[0] if values else None
    parents = _parents(fn)
    holding, node = set(), at
    while node is not None:
        holding.add(id(node))
        node = parents.get(node)

    def statement(v: ast.AST) -> ast.AST:
        while v is not None and not isinstance(v, ast.stmt):
            v = parents.get(v)
        return v

    here = statement(at)
    if here is None or any(statement(v) is None for v in values):
        return None  # a part of a tuple unpacked (made up, outside the tree)
    here = (here.lineno, here.col_offset)
    where = {id(v): (statement(v).lineno, statement(v).col_offset) for v in values}
    loops = [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.While)) and id(n) in holding]
    if any(where[id(v)] > here and any(lp.lineno <= where[id(v)][0] <= lp.end_lineno for lp in loops) for v in values):
        return None  # rebound later in a loop that comes back to ``at``
    before = [v for v in values if where[id(v)] < here]
    dominating = [v for v in before if id(parents.get(statement(v))) in holding]
    if not dominating:
        return None
    last = max(dominating, key=lambda v: where[id(v)])
    return None if any(where[id(v)] > where[id(last)] for v in before) else last


_ASSIGNMENTS: dict[int, tuple[ast.AST, dict]] = {}
_PARENTS: dict[int, tuple[ast.AST, dict]] = {}


def _parents(fn: ast.AST) -> dict:
    """Each node of ``fn`` -> the node that holds it; cached."""
    hit = _PARENTS.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    if len(_PARENTS) > 1024:
        _PARENTS.clear()
    out = {c: p for p in ast.walk(fn) for c in ast.iter_child_nodes(p)}
    _PARENTS[id(fn)] = (fn, out)
    return out


def assignments(fn: ast.AST) -> dict[str, list[ast.expr]]:
    """Every value assigned to each plain name in ``fn`` (tuple unpacking gives subscripts); cached."""
    hit = _ASSIGNMENTS.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    if len(_ASSIGNMENTS) > 4096:
        _ASSIGNMENTS.clear()
    out: dict[str, list[ast.expr]] = {}
    _ASSIGNMENTS[id(fn)] = (fn, out)
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                _bind(target, node.value, out)
        elif isinstance(node, (ast.AnnAssign,)) and node.value is not None:
            _bind(node.target, node.value, out)
    return out


def _bind(target: ast.expr, value: ast.expr, out: dict) -> None:
    if isinstance(target, ast.Name):
        out.setdefault(target.id, []).append(value)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for i, t in enumerate(target.elts):
            if isinstance(t, ast.Name):
                part = value.elts[i] if isinstance(value, (ast.Tuple, ast.List)) and i < len(value.elts) else \
                    ast.copy_location(ast.Subscript(value=value, slice=ast.Constant(i), ctx=ast.Load()), value)
                out.setdefault(t.id, []).append(part)


class Module:
    """One parsed file: its kernels, their launches, the names Triton goes by."""

    def __init__(self, source: str, path: str = "<string>", follow: bool = True):
        self.path, self.source = path, source
        self.tree = parse(source, path)
        self.nodes = list(ast.walk(self.tree))  # walked once; the rules reuse it
        self.lines = source.splitlines()
        self._tl_memo: dict[int, str | None] = {}
        self.names = Names(self.nodes, path, follow)
        self.functions = {n.name: n for n in self.nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.names.read_aliases(self.tree, self.functions)
        self.constants = {t.id: n.value for n in self.tree.body if isinstance(n, ast.Assign)
                          for t in n.targets if isinstance(t, ast.Name)}
        self.kernels: dict[str, Kernel] = {}
        self._kernels()
        self.launches: list[Launch] = []
        self._launches()
        self.foreign: dict[int, Module] = {}  # node id -> the other module a launch of a kernel here is in

    def home_of(self, node: ast.AST) -> "Module":
        """The module ``node`` is in: this one, or another whose launch of a kernel here it belongs to."""
        return self.foreign.get(id(node), self)

    def triton_attr(self, node: ast.AST) -> str | None:
        """``'jit'`` for ``triton.jit`` or a ``jit`` imported from triton; None for anything else."""
        return self.names.triton_attr(node)

    def tl_call(self, node: ast.AST) -> str | None:
        """``'load'`` for ``tl.load(...)`` (``tl.math.exp2`` gives 'exp2'); also through an alias or a one-level
        wrapper, of this file or of a module it imports that lint can find beside it (``tle.program_id(0)``
        gives 'program_id'); None for other calls."""
        if not isinstance(node, ast.Call):
            return None
        if id(node) not in self._tl_memo:
            self._tl_memo[id(node)] = self.names.tl_name(dotted(node.func))
        return self._tl_memo[id(node)]

    def cast_of(self, node: ast.AST) -> str | None:
        """The dtype a wrapper call casts its tl call to (``tle.program_id(0)`` returning int64), if any."""
        return self.names.cast_of(dotted(node.func)) if self.tl_call(node) is not None else None

    def _kernels(self) -> None:
        for fn in self.functions.values():
            kernel = self._kernel_of(fn, fn.decorator_list)
            if kernel:
                self.kernels[fn.name] = kernel
        for node in self.tree.body:  # name = triton.jit(fn)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.value.args:
                inner = node.value.args[0]
                if self.triton_attr(node.value.func) == "jit" and isinstance(inner, ast.Name) \
                        and inner.id in self.functions and isinstance(node.targets[0], ast.Name):
                    k = Kernel(node.targets[0].id, self.functions[inner.id], *self._params(self.functions[inner.id]))
                    self.kernels.setdefault(k.name, k)

    def _kernel_of(self, fn, decorators) -> Kernel | None:
        kinds = {self.triton_attr(d.func if isinstance(d, ast.Call) else d): d for d in decorators}
        if "jit" not in kinds:
            return None
        kernel = Kernel(fn.name, fn, *self._params(fn))
        if isinstance(kinds.get("autotune"), ast.Call):
            kernel.autotune = read_autotune(kinds["autotune"], self.functions, self.constants)
            kernel.constexprs |= kernel.autotune.tuned
        if isinstance(kinds.get("heuristics"), ast.Call) and kinds["heuristics"].args:
            arg = kinds["heuristics"].args[0]
            if isinstance(arg, ast.Dict):
                kernel.heuristics = {k.value for k in arg.keys if isinstance(k, ast.Constant)}
                kernel.constexprs |= kernel.heuristics
        return kernel

    def _params(self, fn) -> tuple[list[str], set[str]]:
        args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
        const = {a.arg for a in args if a.annotation is not None and dotted(a.annotation).endswith("constexpr")}
        const |= {n.target.id for n in ast.walk(fn) if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
                  and dotted(n.annotation).endswith("constexpr")}  # X: tl.constexpr = ... inside the kernel
        return [a.arg for a in args], const

    def _launches(self) -> None:
        calls = [n for n in self.nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)]
        if not calls or not self.kernels:
            return
        parents = {child: node for node in self.nodes for child in ast.iter_child_nodes(node)}
        for node in calls:
            kernel = self.kernels.get(launched_name(node.func.value))
            if kernel is None:
                continue
            launcher = parents.get(node)
            while launcher is not None and not isinstance(launcher, (ast.FunctionDef, ast.AsyncFunctionDef)):
                launcher = parents.get(launcher)
            args = dict(zip(kernel.params, node.args))
            args.update({k.arg: k.value for k in node.keywords if k.arg})
            launch = Launch(kernel, node, node.func.slice, launcher, args)
            kernel.launches.append(launch)
            self.launches.append(launch)


TRACEABLE = ("wrap_triton", "capture_triton")  # torch.library's wrappers that torch.compile traces


def launched_name(node: ast.expr) -> str:
    """The kernel's name in ``kernel[grid]``, ``mod.kernel[grid]`` or ``torch.library.wrap_triton(kernel)[grid]``
    (also ``capture_triton``, its former name): the wrapper launches the kernel it is given with the same grid
    and arguments."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and \
            dotted(node.func).rsplit(".", 1)[-1] in TRACEABLE:
        node = node.args[0]
    return dotted(node).rsplit(".", 1)[-1]


class Expr(str):
    """A config value lint cannot evaluate, kept as its source text (``TritonConfig.BLOCK_K``)."""


MAX_CONFIGS = 4096  # a comprehension lint expands: beyond it, the configs are not read


class Configs:
    """The configs of an autotune as lint can read them: literal lists and tuples of ``triton.Config``,
    comprehensions over literal sequences (or ``range`` of literals), ``+`` of such lists, a module-level name
    bound to one, a function of the file that returns one. ``read(node)`` gives ``(configs, exact)``: one dict
    of literal kwargs per config (a value lint cannot read is absent) and whether the count is exact (an
    ``if`` in a comprehension filters some out); None when lint cannot read them."""

    def __init__(self, functions: dict, constants: dict):
        self.functions, self.constants = functions or {}, constants or {}

    def read(self, node, env=None, depth=0):
        env = env or {}
        if depth > 4 or node is None:
            return None
        if isinstance(node, ast.Name) and node.id not in env and node.id in self.constants:
            return self.read(self.constants[node.id], env, depth + 1)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.functions:
            return self.read(returned(self.functions[node.func.id]), env, depth + 1)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = self.read(node.left, env, depth + 1), self.read(node.right, env, depth + 1)
            return (a[0] + b[0], a[1] and b[1]) if a is not None and b is not None else None
        if isinstance(node, (ast.List, ast.Tuple)):
            out, exact = [], True
            for e in node.elts:
                part = self.read(e.value, env, depth + 1) if isinstance(e, ast.Starred) else self.config(e, env)
                if part is None:
                    return None
                out += part[0]
                exact &= part[1]
            return out, exact
        if isinstance(node, ast.ListComp):
            return self.comprehension(node, env, depth)
        return None

    def config(self, node, env):
        if not (isinstance(node, ast.Call) and dotted(node.func).endswith("Config")):
            return None
        first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "kwargs"), None)
        out = {}
        if isinstance(first, ast.Dict):
            for k, v in zip(first.keys, first.values):
                value = self.value(v, env)
                if value is None and isinstance(v, (ast.Name, ast.Attribute)) and not (
                        isinstance(v, ast.Name) and v.id in env):
                    value = Expr(ast.unparse(v))  # TritonConfig.BLOCK_K: not a literal, but a name lint can match
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and value is not None:
                    out[k.value] = value
        return [out], True

    def value(self, node, env):
        if isinstance(node, ast.Name):
            node = env.get(node.id, self.constants.get(node.id))
            return node if isinstance(node, (int, float, str, bool)) else self.value(node, {}) \
                if isinstance(node, ast.Constant) else None
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
            return node.value
        if isinstance(node, ast.Tuple):
            items = tuple(self.value(e, env) for e in node.elts)
            return None if any(i is None for i in items) else items
        return None

    def sequence(self, node, env) -> list | None:
        if isinstance(node, ast.Name) and node.id in self.constants and node.id not in env:
            node = self.constants[node.id]
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            values = [self.value(e, env) for e in node.elts]
            return None if any(v is None for v in values) else values
        if isinstance(node, ast.Call) and dotted(node.func) == "range" and 1 <= len(node.args) <= 3:
            bounds = [self.value(a, env) for a in node.args]
            if all(isinstance(b, int) for b in bounds) and len(range(*bounds)) <= MAX_CONFIGS:
                return list(range(*bounds))
        return None

    def comprehension(self, node: ast.ListComp, env, depth):
        envs, exact = [dict(env)], True
        for gen in node.generators:
            nxt = []
            for e in envs:
                seq = self.sequence(gen.iter, e)
                if seq is None:
                    return None
                for item in seq:
                    bound = bind(gen.target, item, e)
                    if bound is None:
                        return None
                    nxt.append(bound)
            if len(nxt) > MAX_CONFIGS:
                return None
            envs, exact = nxt, exact and not gen.ifs
        out = []
        for e in envs:
            part = self.config(node.elt, e)
            if part is None:
                return None
            out += part[0]
        return out, exact


def bind(target, item, env) -> dict | None:
    """``env`` with a comprehension's target bound to one item (a name, or a tuple of names)."""
    if isinstance(target, ast.Name):
        return {**env, target.id: item}
    if isinstance(target, ast.Tuple) and isinstance(item, (tuple, list)) and len(item) == len(target.elts):
        out = env
        for t, v in zip(target.elts, item):
            out = bind(t, v, out)
            if out is None:
                return None
        return out
    return None


def returned(fn: ast.FunctionDef) -> ast.expr | None:
    """What a function returns when it has one ``return`` (a name assigned once in it is followed)."""
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return)]
    if len(returns) != 1 or returns[0].value is None:
        return None
    value = returns[0].value
    if isinstance(value, ast.Name):
        bound = assignments(fn).get(value.id, [])
        mutated = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and
                      isinstance(n.func.value, ast.Name) and n.func.value.id == value.id for n in ast.walk(fn)) or \
            any(isinstance(n, ast.AugAssign) for n in ast.walk(fn))
        return bound[0] if len(bound) == 1 and not mutated else None
    return value


def read_autotune(call: ast.Call, functions: dict | None = None, constants: dict | None = None) -> Autotune:
    """What ``@triton.autotune(...)`` says; configs built (or pruned) by a function of the same file are
    read in that function too (its Config kwargs, its pre_hooks)."""
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    at = Autotune(call, literal_strings(kw.get("key")) if "key" in kw else None)
    at.reset_to_zero = literal_strings(kw.get("reset_to_zero")) or []
    at.restore_value = literal_strings(kw.get("restore_value")) or []
    configs = kw.get("configs", call.args[0] if call.args else None)
    read = Configs(functions, constants).read(configs)
    at.single = read is not None and read[1] and len(read[0]) == 1 or \
        isinstance(configs, (ast.List, ast.Tuple)) and len(configs.elts) == 1 and not isinstance(configs.elts[0], ast.Starred)
    if read is not None and read[0]:
        names = set().union(*read[0])
        at.values = {n: {c[n] for c in read[0]} for n in names if all(n in c for c in read[0])}
    hooks = [kw["pre_hook"]] if "pre_hook" in kw else []
    helpers = [functions[n.id] for n in ast.walk(configs) if isinstance(n, ast.Name) and n.id in (functions or {})] \
        if configs is not None else []
    prune = kw.get("prune_configs_by")
    if isinstance(prune, ast.Dict):
        helpers += [functions[n.id] for v in prune.values for n in ast.walk(v)
                    if isinstance(n, ast.Name) and n.id in (functions or {})]
    for node in [n for root in [configs] + helpers if root is not None for n in ast.walk(root)]:
        if isinstance(node, ast.Call) and dotted(node.func).endswith("Config"):
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Dict):
                at.tuned |= {k.value for k in first.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            hooks += [k.value for k in node.keywords if k.arg == "pre_hook"]
    for hook in hooks:
        if isinstance(hook, ast.IfExp):  # init_to_zero("c") if split_k > 1 else None
            hook = hook.body
        names = [n.value for n in ast.walk(hook) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        if isinstance(hook, ast.Call) and names:
            at.hooked |= set(names)
        elif not (isinstance(hook, ast.Constant) and hook.value is None):
            at.opaque_hook = True
    if isinstance(prune, ast.Dict):
        for k, v in zip(prune.keys, prune.values):
            if isinstance(k, ast.Constant) and k.value == "early_config_prune" and isinstance(v, ast.Name):
                at.prune = v.id
            if isinstance(k, ast.Constant) and k.value == "early_config_prune":
                at.divides = pruned_divisors(v, functions or {})
    return at


def pruned_divisors(prune: ast.AST, functions: dict) -> dict[str, str]:
    """What an ``early_config_prune`` keeps whole: ``{block: argument}`` for each filter ``nargs["K"] %
    c.kwargs["BLOCK_K"] == 0`` in a comprehension whose result is all the function returns (or it raises: no
    fallback to the configs as they came). Also a factory of such functions called with the pairs
    (``_divides(BN="CZ")``, whose filter reads ``args[dim] % c.kwargs[ax]`` for each ``ax, dim`` of its
    ``**axes``). Triton prunes on every tuning of a kernel with more than one config."""
    fn, pairs = None, None
    if isinstance(prune, ast.Name):
        fn = functions.get(prune.id)
    elif isinstance(prune, ast.Call) and isinstance(prune.func, ast.Name) and prune.func.id in functions:
        factory = functions[prune.func.id]
        if factory.args.kwarg is None or prune.args or not all(
                k.arg and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str) for k in prune.keywords):
            return {}
        fn = next((n for n in factory.body if isinstance(n, ast.FunctionDef)), None)
        pairs = {k.arg: k.value.value for k in prune.keywords}
    if fn is None:
        return {}
    kept = {}  # the names a filtering comprehension is assigned to
    filters = []
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.ListComp) and len(n.targets) == 1 and \
                isinstance(n.targets[0], ast.Name):
            kept[n.targets[0].id] = n.value
    for comp in [c for c in ast.walk(fn) if isinstance(c, ast.ListComp)]:
        for test in (t for g in comp.generators for t in g.ifs):
            for n in ast.walk(test):
                if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], ast.Eq) and \
                        isinstance(n.comparators[0], ast.Constant) and n.comparators[0].value == 0 and \
                        isinstance(n.left, ast.BinOp) and isinstance(n.left.op, ast.Mod):
                    filters.append((comp, n.left.left, n.left.right))
    returns = [r.value for r in ast.walk(fn) if isinstance(r, ast.Return)]
    whole = {id(kept[r.id]) if isinstance(r, ast.Name) and r.id in kept else id(r) for r in returns}
    out = {}
    for comp, num, den in filters:
        if whole != {id(comp)}:  # some return gives back configs the filter did not keep
            continue
        if not (isinstance(den, ast.Subscript) and isinstance(den.value, ast.Attribute) and den.value.attr == "kwargs"
                and isinstance(num, ast.Subscript)):
            continue
        block, arg = den.slice, num.slice
        if isinstance(block, ast.Constant) and isinstance(arg, ast.Constant):
            out[block.value] = arg.value
        elif pairs is not None and isinstance(block, ast.Name) and isinstance(arg, ast.Name):
            out.update(pairs)
    return out


def literal_strings(node: ast.AST | None) -> list[str] | None:
    """``["a", "b"]`` as a list of str; a single string as a one-item list; None if not literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in node.elts):
        return [e.value for e in node.elts if isinstance(e.value, str)]
    return None
