"""The names Triton goes by in one file: ``triton`` and ``tl`` under any alias, functions imported from
``triton.language``, module-level aliases (``tle = tl``, ``pid = tl.program_id``) and one-level wrappers (a
function whose body returns one tl call of its own arguments), in this file or in a module of the user's
package that the file imports and lint finds beside it (``from pkg.utils import tle``; ``tle.program_id(0)``).
Semantics, not names: a wrapper of ``tl.program_id`` is a program id whatever it is called.
"""

from __future__ import annotations

import ast
from pathlib import Path


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


class Names:
    def __init__(self, nodes: list[ast.AST], path: str, follow: bool = True):
        self.path, self.follow = path, follow
        self.triton_names, self.tl_names, self.from_triton = {"triton"}, {"tl"}, {}
        self.tl_aliases: dict[str, str] = {}  # a bare name that is a tl function: program_id imported, a wrapper
        self.casts: dict[str, str] = {}  # a wrapper's name -> the dtype it casts its tl call to (int64)
        self.imported: dict[str, tuple[str, int, str | None]] = {}  # alias -> (module, level, name in it)
        self._near: dict[str, Wrappers | None] = {}
        for node in nodes:
            if isinstance(node, ast.Import):
                self._import(node)
            elif isinstance(node, ast.ImportFrom):
                self._import_from(node)
        self._prefixes()

    def _prefixes(self) -> None:
        self.tl_prefixes = tuple(p + "." for p in sorted(
            self.tl_names | {f"{t}.language" for t in self.triton_names}, key=len, reverse=True))

    def _import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.name == "triton":
                self.triton_names.add(a.asname or "triton")
            elif a.name == "triton.language":
                self.tl_names.add(a.asname or "triton.language")
            elif a.name.startswith("triton.language.") and a.asname:  # libdevice as ld: ld.exp is tl's
                self.tl_names.add(a.asname)
            elif a.asname or "." not in a.name:
                self.imported[a.asname or a.name] = (a.name, 0, None)

    def _import_from(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for a in node.names:
            name = a.asname or a.name
            if module in ("triton", "triton.language") and not node.level:
                if module == "triton" and a.name == "language":
                    self.tl_names.add(name)
                else:
                    self.from_triton[name] = a.name
                if module == "triton.language":  # from triton.language import program_id [as pid]
                    self.tl_aliases[name] = a.name
            elif module.startswith("triton.language.") and not node.level:  # from triton.language.extra import libdevice
                self.tl_names.add(name)
            elif not module.startswith("triton") or node.level:
                self.imported[name] = (module, node.level, a.name)

    def read_aliases(self, tree: ast.Module, functions: dict) -> None:
        """Module-level aliases (``tle = tl``, ``pid = tl.program_id``) and one-level wrappers (``def
        program_id(axis): return tl.program_id(axis).to(tl.int64)``)."""
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name, value = node.targets[0].id, dotted(node.value)
                if value in self.tl_names or value in {f"{t}.language" for t in self.triton_names}:
                    self.tl_names.add(name)
                    self._prefixes()
                elif value and self.tl_name(value):
                    self.tl_aliases[name] = value.rsplit(".", 1)[-1]
        for fn in functions.values():
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

    def tl_name(self, name: str) -> str | None:
        """The tl function a dotted call name is (``tl.load``, ``pid_of``, ``tle.program_id``), or None."""
        if name.startswith(self.tl_prefixes):
            return name.rsplit(".", 1)[-1]
        if name in self.tl_aliases:
            return self.tl_aliases[name]
        found, attr = self._found(name)
        return found.tl_aliases.get(attr) if found else None

    def cast_of(self, name: str) -> str | None:
        """The dtype the wrapper called ``name`` casts its tl call to, if any."""
        if name in self.casts:
            return self.casts[name]
        found, attr = self._found(name)
        return found.casts.get(attr) if found else None

    def _found(self, name: str) -> tuple["Wrappers | None", str | None]:
        """The other module's wrappers for ``mod.f`` (a module imported as ``mod``) or ``f`` (imported from
        one), and the name to look up there."""
        head, _, last = name.rpartition(".")
        alias = head or last
        if "." in head or alias not in self.imported:
            return None, None
        return self._elsewhere(alias), (last if head else self.imported[last][2])

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


class Wrappers:
    """What another module of the user's package offers as tl functions: its aliases and wrappers."""

    def __init__(self, tl_aliases: dict[str, str], casts: dict[str, str]):
        self.tl_aliases, self.casts = tl_aliases, casts


_NEAR: dict[tuple, Wrappers | None] = {}
NEAR_BYTES = 1 << 20


def wrappers_near(path: str, module: str, level: int) -> Wrappers | None:
    """The wrappers of ``module`` (imported with ``level`` leading dots) as a file beside ``path``: a relative
    import from the file's own package, an absolute one from any folder above it. Read once per file version."""
    for candidate in module_files(path, module, level):
        try:
            if not candidate.is_file():
                continue
            info = candidate.stat()
        except OSError:
            continue
        key = (str(candidate), info.st_mtime_ns, info.st_size)  # the first file found is the module
        if key not in _NEAR:
            if len(_NEAR) > 1024:
                _NEAR.clear()
            _NEAR[key] = _read_wrappers(candidate, info.st_size)
        return _NEAR[key]
    return None


def module_files(path: str, module: str, level: int) -> list[Path]:
    """Where the module ``module``, imported with ``level`` leading dots from the file ``path``, may be, likeliest
    first: a relative import from the file's own package, an absolute one from any folder above it (up to 8)."""
    if not module and not level or path.startswith("<"):
        return []
    try:
        here = Path(path).resolve().parent if Path(path).is_file() else None
    except (OSError, RuntimeError):
        return []
    if here is None:
        return []
    rel = Path(*module.split(".")) if module else Path()
    bases = [here.parents[level - 2] if level >= 2 and len(here.parents) >= level - 1 else here] if level else \
        [here, *list(here.parents)[:8]]
    return [c for base in bases for c in ((base / rel.with_suffix(".py"),) if module else ()) + (base / rel / "__init__.py",)]


def _read_wrappers(path: Path, size: int) -> Wrappers | None:
    if size > NEAR_BYTES:
        return None
    try:
        tree = parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None
    nodes = list(ast.walk(tree))
    names = Names(nodes, str(path), follow=False)
    names.read_aliases(tree, {n.name: n for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))})
    return Wrappers(names.tl_aliases, names.casts)


def wrapper_of(names: Names, fn: ast.FunctionDef) -> tuple[str, str | None] | None:
    """(tl function, dtype cast to or None) when ``fn``'s body is ``return tl.f(a, b)`` (or ``.to(dtype)`` of it)
    with ``a, b`` all its own positional arguments, in order."""
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    value, cast = body[0].value, None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to" \
            and value.args and not names.tl_name(dotted(value.func)):
        cast, value = dotted(value.args[0]).rsplit(".", 1)[-1] or None, value.func.value
    name = names.tl_name(dotted(value.func)) if isinstance(value, ast.Call) else None
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if not name or value.keywords or [a.id if isinstance(a, ast.Name) else None for a in value.args] != params:
        return None
    return name, cast
