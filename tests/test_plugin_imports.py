"""Two rules of the harness's shape (issue 38, "a fence that holds"), each held over every module of
harness/ and shown to fail on a made-up violation:

- a ``_private`` name stays in its module: no ``from harness.x import _name`` and no
  ``module._name`` on an imported harness module (what two modules share gets a public name);
- plugins do not import each other: a module that a registry loads (a probe detector, a
  diagnosis experiment (a probe detector carries its case checks), a lint rule, an interpreter analysis, a command, a
  peer tool's adapter) imports the infrastructure of the packages, never another plugin. What
  two plugins share belongs in a module no registry loads (a package's ``__init__``, ``base``,
  ``_common``, or a layer down). ``ALLOWED_PLUGIN_IMPORTS`` says where and why not yet.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Plugin packages: every module of the package is a plugin but those named (the package's
# infrastructure, which its registry does not load as a plugin).
PLUGINS = {
    "harness/probe/detectors": {"__init__"},  # discover(..., "DETECTOR")
    "harness/probe/experiments": {"__init__"},  # discover(..., "EXPERIMENT")
    "harness/lint/rules": {"__init__", "__main__"},  # and "_*" (_common, _twins): the registry loads the others
    "harness/run/analyses": {"__init__", "base"},  # interp_instrument.default_analyses
    "harness/commands": {"__init__"},  # cli: COMMANDS
}
PLUGIN_FILES = {"harness/bugs": ("peer_", {"peer_common"})}  # bugs.peers.TOOLS loads harness/bugs/peer_*.py

# (importing module, imported plugin): why it does so
ALLOWED_PLUGIN_IMPORTS = {
    ("harness.probe.detectors.shapes_rest", "harness.probe.detectors.shapes"):
        "shapes-rest is shape fuzzing's second turn (the sizes it left for the diagnosis), on shape fuzzing's "
        "own state (Blackboard.fuzz_left) with its own steps: one detector in two registry slots",
    ("harness.probe.detectors.large", "harness.probe.detectors.shapes"):
        "shapes.refused (Triton declining some sizes): to move beside context.crash once the oracle branch's "
        "change to shapes.py (an exception at a fuzzed size) is merged",
}


def _module(rel: str) -> str:
    return rel[:-3].replace("/", ".").removesuffix(".__init__")


def _harness_files() -> dict:
    """module name -> source of every module of harness/."""
    return {_module(p.relative_to(ROOT).as_posix()): p.read_text() for p in sorted((ROOT / "harness").rglob("*.py"))}


def plugins(modules) -> set:
    out = set()
    for m in modules:
        pkg, _, name = m.rpartition(".")
        where = pkg.replace(".", "/")
        if (where in PLUGINS and name not in PLUGINS[where] and not name.startswith("_")) or (
                where in PLUGIN_FILES and name.startswith(PLUGIN_FILES[where][0]) and name not in PLUGIN_FILES[where][1]):
            out.add(m)
    return out


def _imports(module: str, source: str):
    """(line, imported module or ``module.name``, names) of each import in ``source``, at any depth."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, None, a.asname or a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                parts = parts[:len(parts) - node.level + (1 if _is_package(module) else 0)]
                base = ".".join(parts + ([node.module] if node.module else []))
            for a in node.names:
                yield node.lineno, base, a.name, a.asname or a.name


def _is_package(module: str) -> bool:
    return (ROOT / module.replace(".", "/") / "__init__.py").is_file()


def private_imports(module: str, source: str) -> list:
    """``line: what`` of each ``_private`` name ``source`` takes from another harness module."""
    private = lambda n: n.startswith("_") and not n.startswith("__")  # noqa: E731
    found, bound = [], {}
    for line, base, name, alias in _imports(module, source):
        if base.split(".")[0] != "harness":
            continue
        if name is None:
            if alias != base.split(".")[0] or base == alias:  # ``import harness.a.b`` binds ``harness``: not the module
                bound[alias] = base
        elif private(name):
            found.append(f"{line}: from {base} import {name}")
        else:
            bound[alias] = f"{base}.{name}"
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and private(node.attr) and isinstance(node.value, ast.Name)
                and node.value.id in bound):
            found.append(f"{node.lineno}: {node.value.id}.{node.attr} ({bound[node.value.id]})")
    return found


def plugin_imports(module: str, source: str, plugin_names: set) -> list:
    """(line, plugin) of each plugin module that ``source`` imports, itself left out."""
    found = []
    for line, base, name, _ in _imports(module, source):
        for target in (base, f"{base}.{name}" if name else None):
            if target in plugin_names and target != module and (line, target) not in found:
                found.append((line, target))
    return found


def test_no_module_takes_a_private_name_from_another():
    found = [f"{m}:{x}" for m, src in _harness_files().items()
             for x in private_imports(m, src)]
    assert not found, "a _private name used outside its module (give what is shared a public name):\n" + \
        "\n".join(found)


def test_plugins_do_not_import_each_other():
    files = _harness_files()
    names = plugins(files)
    found, used = [], set()
    for m in sorted(names):
        for line, target in plugin_imports(m, files[m], names):
            if (m, target) in ALLOWED_PLUGIN_IMPORTS:
                used.add((m, target))
            else:
                found.append(f"{m}:{line} imports the plugin {target}")
    assert not found, "a plugin imports another (move what they share to a module no registry loads):\n" + \
        "\n".join(found)
    assert used == set(ALLOWED_PLUGIN_IMPORTS), f"ALLOWED names what no longer imports: {set(ALLOWED_PLUGIN_IMPORTS) - used}"


def test_the_plugin_map_names_real_packages_and_finds_their_plugins():
    files = _harness_files()
    for where, infra in PLUGINS.items():
        assert (ROOT / where / "__init__.py").is_file(), where
        assert {n for n in infra if n != "__init__"} <= {p.stem for p in (ROOT / where).glob("*.py")}, where
    found = plugins(files)
    assert {"harness.probe.detectors.shapes", "harness.probe.experiments.intwrap", "harness.probe.detectors.triton_viz",
            "harness.lint.rules.tl101_unmasked_tile", "harness.run.analyses.intwrap", "harness.commands.probe",
            "harness.bugs.peer_ttsem"} <= found
    assert not {"harness.probe.detectors", "harness.run.analyses.base", "harness.lint.rules._common",
                "harness.lint.rules._twins", "harness.probe.cases", "harness.bugs.peers"} & found


def test_a_private_name_taken_from_another_module_fails():
    src = ("from harness.run.analyses.base import Analysis, _owner\nfrom harness.probe import fuzz\n"
           "import harness.core.guards as guards\n\ndef f():\n    return fuzz._range, guards._CANARY, fuzz.__name__\n")
    assert private_imports("harness.x", src) == [
        "1: from harness.run.analyses.base import _owner", "6: fuzz._range (harness.probe.fuzz)",
        "6: guards._CANARY (harness.core.guards)"]
    assert private_imports("harness.x", "from os import _exit\nfrom harness.run import patching\n"
                                        "patching.Patcher\n") == []


def test_a_plugin_importing_another_fails():
    names = {"harness.probe.detectors.order", "harness.probe.detectors.repeat", "harness.lint.rules.tl101_a"}
    src = ("from harness.probe.detectors.order import severity\nfrom harness.probe.detectors import order\n"
           "from harness.probe.detectors import Detector\nfrom . import repeat\n"
           "def f():\n    import harness.lint.rules.tl101_a\n")
    assert plugin_imports("harness.probe.detectors.repeat", src, names) == [
        (1, "harness.probe.detectors.order"), (2, "harness.probe.detectors.order"),
        (6, "harness.lint.rules.tl101_a")]
