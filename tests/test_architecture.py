"""The harness's shape: layers whose imports point one way, no cycles, small functions,
and commands that start without torch.

The layers, lowest first (CONTRIBUTING.md, "How the harness is built"):

    errors < core (and buffers, the name cases import) < run, lint < detectors, checks, probe
           < report, bugs, sanitize < options, commands < cli < __main__

A module may import its own layer or a lower one, never a higher one, and no command
imports another. Imports inside functions count too: a deferred import is still an arrow.
CONTRIBUTING.md's map of the packages gives each its layer; a test keeps the two equal.
"""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "harness"

LAYERS = {
    "harness": 0, "harness.errors": 0,
    "harness.core": 1, "harness.buffers": 1,
    "harness.run": 2, "harness.lint": 2,
    "harness.checks": 3, "harness.probe": 3,
    "harness.report": 4, "harness.bugs": 4, "harness.sanitize": 4,
    "harness.options": 5, "harness.commands": 5,
    "harness.cli": 6,
    "harness.__main__": 7,
}
MAX_FUNCTION_LINES, MAX_CLASS_LINES = 60, 150


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> int:
    """The rank of the longest LAYERS prefix of ``module``."""
    while module not in LAYERS:
        module = module.rpartition(".")[0]
    return LAYERS[module]


def harness_imports(tree: ast.Module, known: set[str]) -> set[str]:
    """The harness modules a file imports, anywhere in it (``from harness.core import spec`` is harness.core.spec)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                     for a in node.names]
        else:
            continue
        out |= {n for n in names if n == "harness" or n.startswith("harness.")}
    return out


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    known = set(files)
    return {m: harness_imports(ast.parse(p.read_text()), known) - {m} for m, p in files.items()}


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{m} (layer {layer(m)}) imports {d} (layer {layer(d)})"
                  for m, deps in graph.items() for d in deps if layer(d) > layer(m))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle found by a depth-first search, each as a path that returns to its start."""
    found, state = [], {}

    def visit(m, path):
        state[m] = "open"
        for d in sorted(graph.get(m, ())):
            if state.get(d) == "open":
                found.append(path[path.index(d):] + [d])
            elif d not in state:
                visit(d, path + [d])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    return found


def test_no_module_imports_a_higher_layer():
    problems = upward_imports(import_graph())
    assert not problems, "\n".join(problems)


def test_the_import_graph_has_no_cycle():
    found = cycles(import_graph())
    assert not found, "\n".join(" -> ".join(c) for c in found)


def test_nothing_imports_the_command_line():
    importers = [m for m, deps in import_graph().items() if "harness.cli" in deps and m != "harness.__main__"]
    assert not importers, importers


def test_the_checks_themselves_catch_a_cycle_and_an_upward_import(tmp_path):
    """The graph tests above must be able to fail: a throw-away package with both defects."""
    pkg = tmp_path / "harness"
    (pkg / "core").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "core" / "a.py").write_text("from harness.core import b\n")
    (pkg / "core" / "b.py").write_text("def f():\n    from harness.core import a\n    from harness import cli\n")
    (pkg / "cli.py").write_text("")
    graph = import_graph(pkg)
    assert cycles(graph) == [["harness.core.a", "harness.core.b", "harness.core.a"]]
    assert upward_imports(graph) == ["harness.core.b (layer 1) imports harness.cli (layer 6)"]


def contributing_layers() -> dict[str, int]:
    """CONTRIBUTING.md's map of the packages: ``harness.<package>`` -> its layer, from rows ``| N | `name/` |``."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    rows = re.findall(r"^\| (\d) \| `([\w.]+?)(?:/|\.py)?` \|", text, re.M)
    return {f"harness.{name}": int(n) for n, name in rows}


def test_contributing_maps_every_package_at_its_layer():
    documented = contributing_layers()
    assert documented, "CONTRIBUTING.md has no map of the packages (rows '| N | `name/` | ...')"
    wrong = {m: (n, LAYERS.get(m)) for m, n in documented.items() if LAYERS.get(m) != n}
    missing = set(LAYERS) - set(documented) - {"harness", "harness.buffers"}  # buffers: a name in core's row
    assert not wrong and not missing, f"CONTRIBUTING.md against LAYERS: wrong {wrong}, missing {sorted(missing)}"


def command_imports(graph: dict[str, set[str]]) -> list[str]:
    """Each command module that imports another command (what two commands share belongs a layer down)."""
    def is_command(m):
        return m.startswith("harness.commands.")
    return sorted(f"{m} imports {d}" for m, deps in graph.items() if is_command(m) for d in deps if is_command(d))


def test_no_command_imports_another():
    found = command_imports(import_graph())
    assert not found, "\n".join(found) + "\n(move what they share to harness/options.py or a lower layer)"


VALIDATOR = "harness/core/spec.py"  # case.toml's one validator: spec.validate, whose first error parse_spec raises


def _strings(tree: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def validator_messages(tree: ast.Module) -> set[str]:
    """The text of every message the validator gives (the literal parts of each FieldError(..., what))."""
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "FieldError"]
    return {s.strip() for c in calls if len(c.args) == 3 for s in _strings(c.args[2]) if len(s.strip()) >= 20}


def second_validators(root: Path = PACKAGE) -> list[str]:
    """Modules other than the validator that build FieldErrors or repeat its messages (a mirrored schema)."""
    messages = validator_messages(ast.parse((root.parent / VALIDATOR).read_text()))
    found = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root.parent).as_posix()
        if name == VALIDATOR:
            continue
        tree = ast.parse(path.read_text())
        if any(isinstance(n, ast.Call) and getattr(n.func, "id", "") == "FieldError" for n in ast.walk(tree)):
            found.append(f"{name} builds FieldErrors")
        copied = sorted({m for s in _strings(tree) for m in messages if m in s})
        found += [f"{name} repeats the validator's message {m!r}" for m in copied[:3]]
    return found


def test_case_toml_has_one_validator():
    found = second_validators()
    assert not found, "\n".join(found) + f"\n(case.toml is validated in {VALIDATOR} only: use spec.validate)"


def test_the_one_validator_check_catches_a_mirror(tmp_path):
    """The test above must be able to fail: a throw-away package whose checks copy a message."""
    (tmp_path / "harness" / "core").mkdir(parents=True)
    (tmp_path / "harness" / "checks").mkdir()
    (tmp_path / VALIDATOR).write_text('def f(b):\n    return FieldError("run", "value", f"[run] {b} must be a whole number")\n')
    (tmp_path / "harness" / "checks" / "meta.py").write_text('def g(b):\n    raise ValueError(f"[run] {b} must be a whole number")\n')
    graph = {"harness.commands.report": {"harness.commands.detect", "harness.options"}}
    assert second_validators(tmp_path / "harness") == [
        "harness/checks/meta.py repeats the validator's message 'must be a whole number'"]
    assert command_imports(graph) == ["harness.commands.report imports harness.commands.detect"]


# Writes that do not go through harness/core/fileio, each with why it need not: a stream read as it grows,
# a lock, or a file made inside a folder that is itself put in place whole.
DIRECT_WRITES = {
    ("harness/run/isolate.py", "open"): "the worker's event log, a stream read line by line as it grows",
    ("harness/run/worker.py", "open"): "the same stream, written by the worker",
    ("harness/run/timings.py", "open"): "CASEBOOK_TIMINGS: a JSON-lines log appended to",
    ("harness/sanitize/session.py", "open"): "the sanitizer's hits, a JSON-lines stream a dying process keeps",
    ("harness/sanitize/gpu_plugin.py", "open"): "where each test got to, a JSON-lines stream a dying process keeps",
    ("harness/sanitize/runner.py", "open"): "the sanitizer's results file, made empty and held open so a command "
                                            "that deletes it does not take the findings along",
    ("harness/sanitize/runner.py", "write_bytes"): "that file put back, from the open handle, where the command removed it",
    ("harness/sanitize/gpu.py", "open"): "the tests already run, appended to in the command's temporary folder",
    ("harness/bugs/record.py", "open"): "a lock file",
    ("harness/bugs/source.py", "open"): "a lock file",
    ("harness/run/triton_compat.py", "open"): "a GPU's lock file: the workers' autotune benchmarks take turns on it",
    ("harness/bugs/source.py", "write_bytes"): "into a temporary tree that one rename puts in place",
    ("harness/bugs/source.py", "write_text"): "the same temporary tree",
    ("harness/commands/new.py", "write_text"): "into fileio.new_folder's temporary folder, renamed whole",
    ("harness/report/plots.py", "savefig"): "into the report's temporary folder, renamed with the page as one set",
}


def direct_writes(root: Path = PACKAGE) -> list[tuple[str, str, int]]:
    """(file, call, line) of each write in the package that does not go through harness/core/fileio."""
    out = []
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root.parent).as_posix()
        if name == "harness/core/fileio.py":
            continue
        for n in ast.walk(ast.parse(path.read_text())):
            f = getattr(n, "func", None)
            if not isinstance(n, ast.Call) or not isinstance(f, (ast.Attribute, ast.Name)):
                continue
            call, owner = (f.attr, getattr(f.value, "id", "")) if isinstance(f, ast.Attribute) else (f.id, "")
            modes = [a.value for a in n.args[1:2] if isinstance(a, ast.Constant)]
            modes += [k.value.value for k in n.keywords if k.arg == "mode" and isinstance(k.value, ast.Constant)]
            if (call in ("write_text", "write_bytes") and owner != "fileio" and isinstance(f, ast.Attribute)
                    or call == "savefig" or call == "dump" and owner == "json"
                    or call == "open" and any(set(str(m)) & set("wax+") for m in modes)):
                out.append((name, call, n.lineno))
    return out


def test_every_file_is_written_through_fileio():
    """Every file the harness writes appears whole or not at all: through core/fileio, or listed with why not."""
    found = [f"{name}:{line} {call}" for name, call, line in direct_writes() if (name, call) not in DIRECT_WRITES]
    assert not found, "\n".join(found) + "\n(write through harness/core/fileio, or say in DIRECT_WRITES why not)"


def test_the_write_check_catches_a_direct_write(tmp_path):
    (tmp_path / "harness" / "core").mkdir(parents=True)
    (tmp_path / "harness" / "core" / "fileio.py").write_text("def write_text(p, t):\n    open(p, 'w')\n")
    (tmp_path / "harness" / "a.py").write_text("from harness.core import fileio\n\ndef f(p):\n    fileio.write_text(p, '')\n"
                                               "    p.write_text('')\n    open(p, 'rb')\n    open(p, mode='a')\n")
    assert direct_writes(tmp_path / "harness") == [("harness/a.py", "write_text", 5), ("harness/a.py", "open", 7)]


def _long_definitions():
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            lines = getattr(node, "end_lineno", 0) - getattr(node, "lineno", 0) + 1
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and lines > MAX_FUNCTION_LINES:
                yield f"{path.relative_to(ROOT)}:{node.lineno} function {node.name}: {lines} lines"
            elif isinstance(node, ast.ClassDef) and lines > MAX_CLASS_LINES:
                yield f"{path.relative_to(ROOT)}:{node.lineno} class {node.name}: {lines} lines"


def test_functions_and_classes_stay_small():
    long = list(_long_definitions())
    assert not long, "\n".join(long)


def _modules_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(' '.join(sorted(m for m in ('torch', 'triton') if m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return set(out.stdout.split())


@pytest.mark.parametrize("argv", [["--help"], ["list"], ["list", "--json"], ["case", "--help"], ["new", "--help"]])
def test_help_and_list_import_neither_torch_nor_triton(argv):
    code = (f"import contextlib, io\nfrom harness.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    try:\n        main({argv!r})\n    except SystemExit:\n        pass")
    assert _modules_after(code) == set()


def test_the_case_contract_imports_neither_torch_nor_triton():
    mods = ["spec", "discovery", "events", "verdict", "table", "recorded", "markdown"]
    assert _modules_after("\n".join(f"import harness.core.{m}" for m in mods)) == set()
