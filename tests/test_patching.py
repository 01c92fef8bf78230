"""harness.run.patching: the one undo stack every patch of Triton (and torch) goes through."""

import types

import pytest

from harness.run.patching import Patcher


class Base:
    inherited = "base"


class Child(Base):
    own = "child"


def test_undo_puts_back_own_attributes_and_removes_added_ones_last_first():
    module = types.ModuleType("m")
    module.value = 1
    with Patcher() as p:
        p.setattr(Child, "own", "patched")
        p.setattr(Child, "inherited", "shadowed")
        p.setattr(module, "value", 2)
        p.setattr(module, "value", 3)  # patched twice: the first value comes back, not the second
        p.setattr(module, "added", 4)
        assert (Child.own, Child.inherited, module.value, module.added) == ("patched", "shadowed", 3, 4)
    assert Child.__dict__["own"] == "child" and "inherited" not in Child.__dict__ and Child.inherited == "base"
    assert module.value == 1 and not hasattr(module, "added")


def test_an_instance_attribute_set_by_a_patch_leaves_the_class_attribute_showing():
    obj = Child()
    p = Patcher()
    p.setattr(obj, "own", "mine")
    assert obj.own == "mine"
    p.undo()
    assert "own" not in vars(obj) and obj.own == "child"


def test_setitem_and_callbacks_are_undone_and_the_stack_is_reusable():
    d = {"a": 1}
    calls = []
    p = Patcher()
    p.setitem(d, "a", 2)
    p.setitem(d, "b", 3)
    p.callback(lambda: calls.append("hook removed"))
    p.undo()
    assert d == {"a": 1} and calls == ["hook removed"]
    p.setitem(d, "a", 5)
    p.undo()
    assert d == {"a": 1}


def test_an_exception_inside_the_block_still_undoes():
    module = types.ModuleType("m")
    module.value = 1
    with pytest.raises(ZeroDivisionError):
        with Patcher() as p:
            p.setattr(module, "value", 2)
            1 / 0
    assert module.value == 1


# ---------------------------------------------------------------- nothing left patched after a run

LEFT_AS_THEY_WERE = r'''
import json, os, sys, tempfile, types
os.environ["TRITON_INTERPRET"] = "1"
import torch, triton, triton.testing, triton.language.extra.libdevice
from triton import knobs
from triton.runtime import autotuner, driver, interpreter, jit
from harness.run import interp_instrument, triton_compat, patching

def owners():
    """Every object whose attributes the harness patches, and the classes of Triton's interpreter."""
    objs = {"torch": torch, "torch.Tensor": torch.Tensor, "torch.cuda": torch.cuda, "triton.testing": triton.testing,
            "driver": driver, "Autotuner": autotuner.Autotuner, "JITFunction": jit.JITFunction,
            "interp_instrument": interp_instrument}
    objs.update({f"knobs.{n}": getattr(knobs, n) for n in ("runtime", "autotuning", "compilation")})
    objs["interpreter"] = interpreter
    objs.update({f"interpreter.{n}": v for n, v in vars(interpreter).items() if isinstance(v, type)
                 and v.__module__ == interpreter.__name__})
    objs.update({m: sys.modules[m] for m in list(sys.modules) if m.startswith("triton.language.extra.")
                 and m.endswith("libdevice")})
    return objs

def snapshot():
    return {name: {k: v for k, v in vars(o).items() if not isinstance(v, types.ModuleType)}
            for name, o in owners().items()}

def changed(before, after):
    out = []
    for name, attrs in after.items():
        old = before.get(name, {})
        out += [f"{name}.{k}" for k, v in attrs.items() if k not in old or old[k] is not v]
        out += [f"{name}.{k} (removed)" for k in old if k not in attrs]
    return out

from harness.probe import worker as probe_worker
from harness.run import worker as case_worker
from harness.sanitize.session import Session
before = snapshot()
tmp = tempfile.mkdtemp()
probe = probe_worker.run({"file": sys.argv[1], "detectors": ["reference", "memcheck", "race", "first-call"],
                          "backend": "interpreter", "events": os.path.join(tmp, "probe.jsonl"), "timeout": 60})
case = case_worker.run({"path": sys.argv[2], "variants": ["broken", "fixed"], "backend": "interpreter", "trials": 1,
                        "seed": 0, "events": os.path.join(tmp, "case.jsonl")})
with Session():
    pass
print(json.dumps({"probe": probe, "case": case, "changed": changed(before, snapshot())}))
'''


def test_after_a_probe_a_case_run_and_a_sanitizer_session_every_patched_attribute_is_the_original():
    """The probe's and a case worker's runs (autotune, libdevice, the instrumented interpreter,
    poisoned allocations) and a sanitizer session leave every attribute of Triton's interpreter,
    autotuner, knobs and libdevice, and of torch's allocators and CUDA module, the very object it was."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-c", LEFT_AS_THEY_WERE, str(root / "tests/probe_fixtures/everyday/libdevice_gelu.py"),
                          str(root / "cases/autotune-key-missing-shape")], cwd=root, capture_output=True, text=True,
                         timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert (doc["probe"], doc["case"]) == (0, 0)
    assert doc["changed"] == []


# ---------------------------------------------------------------- one way to patch

# Assignments to another module's attribute that are not a patch, or not yet through a Patcher: each with why.
NOT_THROUGH_A_PATCHER = {
    "harness/sanitize/child.py": "sys.argv: the user's script runs as __main__ in this child process, for good",
}


def _module_names(tree) -> set:
    import ast

    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {a.asname or a.name for a in node.names}  # a class or module imported by name
    return names


def patches_outside_a_patcher(path) -> list:
    """``module.attr = ...`` (and ``setattr(module, ...)``) in ``path``, where ``module`` is a name it imported."""
    import ast

    tree = ast.parse(path.read_text())
    imported, out = _module_names(tree), []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AugAssign, ast.AnnAssign)) else []
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr" and node.args:
            targets = [ast.Attribute(value=node.args[0], attr="?", lineno=node.lineno)]
        for t in targets:
            for e in t.elts if isinstance(t, ast.Tuple) else [t]:
                base = e.value if isinstance(e, ast.Attribute) else None
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name) and base.id in imported:
                    out.append(f"{path}:{e.lineno} {ast.unparse(e)}")
    return out


def test_every_patch_of_another_module_goes_through_a_patcher():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    found = [hit for p in sorted((root / "harness").rglob("*.py")) if p.name != "patching.py"
             and str(p.relative_to(root)) not in NOT_THROUGH_A_PATCHER for hit in patches_outside_a_patcher(p)]
    assert not found, "patch through harness.run.patching.Patcher (or say why not above):\n" + "\n".join(found)


def test_the_patch_finder_finds_an_assignment_and_a_setattr(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import torch\nfrom triton.runtime import interpreter\nx = 1\ntorch.empty = None\n"
                    "setattr(interpreter, 'y', 1)\nobj = object()\nobj.z = 2\n")
    assert [h.split(" ")[0].rsplit(":", 1)[1] for h in patches_outside_a_patcher(path)] == ["4", "5"]
