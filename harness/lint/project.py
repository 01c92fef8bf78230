"""Kernels launched from another file of the linted tree.

A package often keeps its kernels in one module and launches them from another: ``from .kernels import
k`` then ``k[grid](...)``, or ``import pkg.kernels as K`` then ``K.k[grid](...)`` (also ``from pkg import
kernels``, and through ``torch.library.wrap_triton``). Linting the files one by one, the kernel has no
launch and the launch no kernel, so the rules that read a launch (the grid, the block passed, the buffer
handed in) see nothing. ``pair_launches`` pairs each such launch with the kernel in the module that defines
it, among the files linted together: the kernel's ``launches`` and its module's ``launches`` hold it, with
``Launch.home`` the launcher's module. A hit on a node of the launcher's file is reported in that file
(``Module.home_of``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from harness.lint.model import TRACEABLE, Launch, Module, dotted
from harness.lint.names import module_files


def _key(path: Path) -> str | None:
    try:
        return str(path.resolve())
    except (OSError, RuntimeError):
        return None


def pair_launches(modules: list[tuple[Path, Module]]) -> int:
    """Pair the launches of kernels imported from another of ``modules`` (each with the file it was read
    from); the number of launches paired."""
    by_file = {k: m for path, m in modules if (k := _key(path)) is not None}
    kernel_files = {k: m for k, m in by_file.items() if m.kernels}
    if not kernel_files:
        return 0
    paired = 0
    for path, module in modules:
        if "](" not in module.source or not module.names.imported:
            continue
        local = {id(l.node) for l in module.launches}
        parents = None
        for node in module.nodes:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript)) or id(node) in local:
                continue
            found = _kernel(module, str(path), node.func.value, kernel_files)
            if found is None or found[0] is module:
                continue
            owner, kernel = found
            if parents is None:
                parents = {c: p for p in module.nodes for c in ast.iter_child_nodes(p)}
            launcher = parents.get(node)
            while launcher is not None and not isinstance(launcher, (ast.FunctionDef, ast.AsyncFunctionDef)):
                launcher = parents.get(launcher)
            args = dict(zip(kernel.params, node.args))
            args.update({k.arg: k.value for k in node.keywords if k.arg})
            launch = Launch(kernel, node, node.func.slice, launcher, args, home=module)
            kernel.launches.append(launch)
            owner.launches.append(launch)
            for n in ast.walk(launcher if launcher is not None else node):
                owner.foreign[id(n)] = module
            paired += 1
    return paired


def _kernel(module: Module, path: str, launched: ast.expr, kernel_files: dict):
    """(module, kernel) for ``k``, ``K.k`` or ``wrap_triton(k)`` when ``k`` (or ``K``) was imported from a
    module of ``kernel_files``; None otherwise."""
    if isinstance(launched, ast.Call) and len(launched.args) == 1 and not launched.keywords and \
            dotted(launched.func).rsplit(".", 1)[-1] in TRACEABLE:
        launched = launched.args[0]
    name = dotted(launched)
    if not name:
        return None
    head, _, rest = name.partition(".")
    imported = module.names.imported.get(head)
    if imported is None:
        return None
    source, level, member = imported
    if not rest:  # from pkg.kernels import k: k[grid]
        return _find(path, source, level, member, kernel_files)
    parts = rest.split(".")
    kernel_name, inner = parts[-1], parts[:-1]
    dotted_module = ".".join(p for p in [source, member, *inner] if p)  # from pkg import kernels / import pkg.kernels as K
    return _find(path, dotted_module, level, kernel_name, kernel_files)


def _find(path: str, source: str, level: int, name: str | None, kernel_files: dict):
    if not name:
        return None
    for candidate in module_files(path, source, level):
        owner = kernel_files.get(_key(candidate))
        if owner is not None and name in owner.kernels:
            return owner, owner.kernels[name]
    return None
