"""What ``lint`` reads from one Python file, with ``ast`` only: the kernels and their launches.

Nothing here imports the user's code, torch or Triton. A *kernel* is a function decorated
with ``@triton.jit`` (also under ``@triton.autotune`` / ``@triton.heuristics``, or wrapped
as ``name = triton.jit(fn)``); a *launch* is ``kernel[grid](...)`` anywhere in the same file,
and the function it sits in is its *launcher*.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path


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
    single: bool = False  # configs= is a literal list of one Config: the autotuner never benchmarks

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


_ASSIGNMENTS: dict[int, tuple[ast.AST, dict]] = {}


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


def parse(source: str, path: str = "<string>") -> ast.Module:
    """``ast.parse``, with nesting too deep for Python's parser a SyntaxError like any other."""
    try:
        return ast.parse(source, filename=path)
    except (RecursionError, MemoryError):
        raise SyntaxError("nested too deeply for Python's parser", (path, None, None, None)) from None


def dotted(node: ast.AST) -> str:
    """``a.b.c`` for a chain of attributes on a name, '' otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


class Module:
    """One parsed file: its kernels, their launches, the names Triton goes by."""

    def __init__(self, source: str, path: str = "<string>", follow: bool = True):
        self.path, self.source, self.follow = path, source, follow
        self.tree = parse(source, path)
        self.nodes = list(ast.walk(self.tree))  # walked once; the rules reuse it
        self.lines = source.splitlines()
        self.triton_names, self.tl_names, self.from_triton = {"triton"}, {"tl"}, {}
        self.tl_aliases: dict[str, str] = {}  # a bare name that is a tl function: program_id imported, a wrapper
        self.casts: dict[str, str] = {}  # a wrapper's name -> the dtype it casts its tl call to (int64)
        self.imported: dict[str, tuple[str, int, str | None]] = {}  # alias -> (module, level, name in it)
        self._near: dict[str, Wrappers | None] = {}
        self._imports()
        self._tl_prefixes = tuple(p + "." for p in sorted(
            self.tl_names | {f"{t}.language" for t in self.triton_names}, key=len, reverse=True))
        self._tl_memo: dict[int, str | None] = {}
        self.functions = {n.name: n for n in self.nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self._aliases()
        self.constants = {t.id: n.value for n in self.tree.body if isinstance(n, ast.Assign)
                          for t in n.targets if isinstance(t, ast.Name)}
        self.kernels: dict[str, Kernel] = {}
        self._kernels()
        self.launches: list[Launch] = []
        self._launches()

    def _imports(self) -> None:
        for node in self.nodes:
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name == "triton":
                        self.triton_names.add(a.asname or "triton")
                    elif a.name == "triton.language":
                        self.tl_names.add(a.asname or "triton.language")
                    elif a.name.startswith("triton.language.") and a.asname:  # libdevice as ld: ld.exp is tl's
                        self.tl_names.add(a.asname)
                    elif a.asname or "." not in a.name:
                        self.imported[a.asname or a.name] = (a.name, 0, None)
            elif isinstance(node, ast.ImportFrom) and node.module in ("triton", "triton.language"):
                for a in node.names:
                    if node.module == "triton" and a.name == "language":
                        self.tl_names.add(a.asname or "language")
                    else:
                        self.from_triton[a.asname or a.name] = a.name
                    if node.module == "triton.language":  # from triton.language import program_id [as pid]
                        self.tl_aliases[a.asname or a.name] = a.name
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("triton.language."):
                for a in node.names:  # from triton.language.extra import libdevice
                    self.tl_names.add(a.asname or a.name)
            elif isinstance(node, ast.ImportFrom) and not (node.module or "").startswith("triton"):
                for a in node.names:
                    self.imported[a.asname or a.name] = (node.module or "", node.level, a.name)

    def _aliases(self) -> None:
        """Module-level aliases (``tle = tl``, ``pid = tl.program_id``) and one-level wrappers: a function whose
        body returns one tl call of its own arguments, in order (``def program_id(axis): return
        tl.program_id(axis).to(tl.int64)``), is that call."""
        for node in self.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name, value = node.targets[0].id, dotted(node.value)
                if value in self.tl_names or value in {f"{t}.language" for t in self.triton_names}:
                    self.tl_names.add(name)
                elif value and self.tl_call(ast.Call(func=node.value, args=[], keywords=[])):
                    self.tl_aliases[name] = value.rsplit(".", 1)[-1]
        self._tl_memo.clear()
        for fn in self.functions.values():
            wrapped = wrapper_of(self, fn)
            if wrapped:
                self.tl_aliases[fn.name], cast = wrapped
                if cast:
                    self.casts[fn.name] = cast

    def triton_attr(self, node: ast.AST) -> str | None:
        """``'jit'`` for ``triton.jit`` or a ``jit`` imported from triton; None for anything else."""
        name = dotted(node)
        head, _, last = name.rpartition(".")
        if head in self.triton_names:
            return last
        if not head and name in self.from_triton:
            return self.from_triton[name]
        return None

    def tl_call(self, node: ast.AST) -> str | None:
        """``'load'`` for ``tl.load(...)`` (``tl.math.exp2`` gives 'exp2'); also through an alias or a one-level
        wrapper, of this file or of a module it imports that lint can find beside it (``tle.program_id(0)``
        gives 'program_id'); None for other calls."""
        if not isinstance(node, ast.Call):
            return None
        if id(node) not in self._tl_memo:
            self._tl_memo[id(node)] = self._tl_name(dotted(node.func))
        return self._tl_memo[id(node)]

    def _tl_name(self, name: str) -> str | None:
        if name.startswith(self._tl_prefixes):
            return name.rsplit(".", 1)[-1]
        if name in self.tl_aliases:
            return self.tl_aliases[name]
        head, _, last = name.rpartition(".")
        if "." in head or not (head or last) in self.imported:
            return None
        found = self._elsewhere(head or last)
        return found.tl_aliases.get(last if head else self.imported[last][2]) if found else None

    def cast_of(self, node: ast.AST) -> str | None:
        """The dtype a wrapper call casts its tl call to (``tle.program_id(0)`` returning int64), if any."""
        if not isinstance(node, ast.Call) or self.tl_call(node) is None:
            return None
        name = dotted(node.func)
        head, _, last = name.rpartition(".")
        if name in self.casts:
            return self.casts[name]
        found = self._elsewhere(head or last) if "." not in head and (head or last) in self.imported else None
        return found.casts.get(last if head else self.imported[last][2]) if found else None

    def _elsewhere(self, alias: str) -> "Wrappers | None":
        """The aliases and wrappers of the module ``alias`` was imported from (or is), found beside this file."""
        if not self.follow:
            return None
        if alias not in self._near:
            module, level, name = self.imported[alias]
            dotted_name = module if name is None else (f"{module}.{name}" if module else name)
            self._near[alias] = wrappers_near(self.path, dotted_name, level) or (
                wrappers_near(self.path, module, level) if name is not None and module else None)
        return self._near[alias]

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
            kernel.autotune = read_autotune(kinds["autotune"], self.functions)
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
            name = dotted(node.func.value).rsplit(".", 1)[-1]
            kernel = self.kernels.get(name)
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


class Wrappers:
    """What another module of the user's package offers as tl functions: its aliases and wrappers."""

    def __init__(self, tl_aliases: dict[str, str], casts: dict[str, str]):
        self.tl_aliases, self.casts = tl_aliases, casts


_NEAR: dict[str, Wrappers | None] = {}
NEAR_BYTES = 1 << 20


def wrappers_near(path: str, module: str, level: int) -> Wrappers | None:
    """The wrappers of ``module`` (imported with ``level`` leading dots) as a file beside ``path``: a relative
    import from the file's own package, an absolute one from any folder above it. Read once per file."""
    if not module and not level or path.startswith("<"):
        return None
    try:
        here = Path(path).resolve().parent if Path(path).is_file() else None
    except (OSError, RuntimeError):
        return None
    if here is None:
        return None
    rel = Path(*module.split(".")) if module else Path()
    bases = [here.parents[level - 2] if level >= 2 and len(here.parents) >= level - 1 else here] if level else \
        [here, *list(here.parents)[:8]]
    for base in bases:
        for candidate in (base / rel.with_suffix(".py") if module else None, base / rel / "__init__.py"):
            if candidate is not None and candidate.is_file():
                key = str(candidate)
                if key not in _NEAR:
                    if len(_NEAR) > 1024:
                        _NEAR.clear()
                    _NEAR[key] = _read_wrappers(candidate)
                return _NEAR[key]
    return None


def _read_wrappers(path: Path) -> Wrappers | None:
    try:
        if path.stat().st_size > NEAR_BYTES:
            return None
        other = Module(path.read_text(encoding="utf-8"), str(path), follow=False)
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return Wrappers(other.tl_aliases, other.casts)


def wrapper_of(module: "Module", fn: ast.FunctionDef) -> tuple[str, str | None] | None:
    """(tl function, dtype cast to or None) when ``fn``'s body is ``return tl.f(a, b)`` (or ``.to(dtype)`` of it)
    with ``a, b`` its own first arguments in order."""
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    value, cast = body[0].value, None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to" \
            and value.args and module.tl_call(value) is None:
        cast, value = dotted(value.args[0]).rsplit(".", 1)[-1] or None, value.func.value
    name = module.tl_call(value) if isinstance(value, ast.Call) else None
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if not name or value.keywords or [a.id if isinstance(a, ast.Name) else None for a in value.args] != \
            params[:len(value.args)] or len(value.args) != len(params):
        return None
    return name, cast


def read_autotune(call: ast.Call, functions: dict | None = None) -> Autotune:
    """What ``@triton.autotune(...)`` says; configs built (or pruned) by a function of the same file are
    read in that function too (its Config kwargs, its pre_hooks)."""
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    at = Autotune(call, literal_strings(kw.get("key")) if "key" in kw else None)
    at.reset_to_zero = literal_strings(kw.get("reset_to_zero")) or []
    at.restore_value = literal_strings(kw.get("restore_value")) or []
    configs = kw.get("configs", call.args[0] if call.args else None)
    at.single = isinstance(configs, (ast.List, ast.Tuple)) and len(configs.elts) == 1 and \
        not isinstance(configs.elts[0], ast.Starred)
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
    return at


def literal_strings(node: ast.AST | None) -> list[str] | None:
    """``["a", "b"]`` as a list of str; a single string as a one-item list; None if not literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)) and all(isinstance(e, ast.Constant) for e in node.elts):
        return [e.value for e in node.elts if isinstance(e.value, str)]
    return None
