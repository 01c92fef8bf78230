"""The Triton fence: ``harness/run/`` is the one place that patches Triton (``run/triton_compat.py``
says so). A ``Patcher`` call (``setattr``/``setitem``) whose object is a name imported from Triton
is allowed there; anywhere else only where ``ALLOWED`` names the function, with the reason. A new
patch outside ``run/`` fails here until it moves there (an analysis hook) or says why it cannot."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = "harness/run/"

# (module, function): why it patches Triton itself, outside harness/run/
ALLOWED = {
    ("harness/probe/tf32_rounding.py", "ieee"):
        "Triton's own configuration (triton.knobs: fp32 precision, a fresh cache directory) for one run, as "
        "its environment variables set it: configuration, not Triton's internals",
    ("harness/sanitize/fakecuda.py", "_triton"):
        "sanitize's fake CUDA for a user's suite on the CPU: triton.testing.do_bench runs once and a "
        "stand-in driver answers where no GPU is (the suite's own calls, which the harness does not make)",
    ("harness/sanitize/session.py", "_interpret_compiled"):
        "a user's suite imported its kernels before TRITON_INTERPRET=1 was set: JITFunction.run launches an "
        "interpreted copy for the session (the suite's launches, which the harness does not make)",
}


def _triton_names(tree: ast.AST) -> set:
    """The names a module binds to Triton or something imported from it."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names if a.name.split(".")[0] == "triton"}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "triton":
            names |= {a.asname or a.name for a in node.names}
    return names


def _root(expr) -> str | None:
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else None


def triton_patches(source: str) -> list:
    """(function, line, what) of each ``.setattr``/``.setitem`` call on a Triton object in ``source``."""
    tree = ast.parse(source)
    triton = _triton_names(tree)
    where = {}
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                where[id(node)] = fn.name  # the innermost function: ast.walk reaches inner ones later
    return [(where.get(id(n), "<module>"), n.lineno, ast.unparse(n.args[0]))
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("setattr", "setitem")
            and n.args and _root(n.args[0]) in triton]


def test_triton_is_patched_only_behind_the_fence():
    found, used = [], set()
    for path in sorted((ROOT / "harness").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for fn, line, what in triton_patches(path.read_text()):
            if rel.startswith(FENCE):
                continue
            if (rel, fn) in ALLOWED:
                used.add((rel, fn))
            else:
                found.append(f"{rel}:{line}: {fn} patches {what}")
    assert not found, "Triton patched outside harness/run/ (move it there, or add it to ALLOWED with why):\n" + \
        "\n".join(found)
    assert used == set(ALLOWED), f"ALLOWED names what no longer patches Triton: {set(ALLOWED) - used}"


def test_the_fence_sees_a_patch_through_any_import_of_triton():
    src = ("import triton.language as tl\nfrom triton.runtime import driver\nimport torch\n\n"
           "def f(p):\n    p.setattr(tl.core, 'x', 1)\n    p.setitem(driver.__dict__, 'y', 2)\n"
           "    p.setattr(torch, 'z', 3)\n")
    assert triton_patches(src) == [("f", 6, "tl.core"), ("f", 7, "driver.__dict__")]
