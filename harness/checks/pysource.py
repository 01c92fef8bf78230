"""Reading a case's Python files without running them: comments, signatures, top-level names."""

from __future__ import annotations

import ast
import copy
import io
import tokenize


def comments(source: str) -> dict[int, tuple[str, str]]:
    """line -> (the code before the comment, the comment) for each comment in ``source``."""
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = (tok.line[:tok.start[1]].strip(), tok.string)
    return out


def signature(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The parameters of ``fn`` as text, annotations left out."""
    args = copy.deepcopy(fn.args)
    for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if a is not None:
            a.annotation = None
    return ast.unparse(args)


def top_level_names(tree: ast.Module) -> dict[str, ast.AST]:
    """Every name a module binds at its top level: functions, classes, assignments, imports."""
    names: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Name):
                    names[t.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names[(a.asname or a.name).split(".")[0]] = node
    return names
