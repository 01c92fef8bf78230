"""C1xx, files: the required files are there, read as text, parse, and define what the harness calls."""

from __future__ import annotations

import ast
from typing import Iterator

from harness.checks.folder import KERNELS, CaseFolder
from harness.checks.problem import ERROR, Violation
from harness.checks.pysource import signature, top_level_names
from harness.checks.registry import rule
from harness.core.spec import REQUIRED_FILES

MISSING_HINTS = {
    "case.toml": "the metadata; 'python -m harness new <slug>' writes one to start from",
    "case.py": "define make_inputs(*, device, gen, **sizes) and reference(...)",
    "broken.py": "the broken kernel and its launcher, faulty lines marked '# BUG: why'",
    "fixed.py": "the fixed kernel and the same launcher as broken.py, changed lines marked '# FIX: why'",
    "README.md": "the write-up: the template is in CONTRIBUTING.md",
}


@rule("C101", "file-missing", ERROR, why="the harness and pytest load all five files; a case without one cannot run")
def file_missing(case: CaseFolder) -> Iterator[Violation]:
    """A required file (case.toml, case.py, broken.py, fixed.py, README.md) is not in the folder."""
    for name in REQUIRED_FILES:
        if name not in case.present:
            yield Violation(name, "missing", MISSING_HINTS[name])


@rule("C102", "file-unreadable", ERROR, why="every file is read as UTF-8 text; the other rules cannot read it")
def file_unreadable(case: CaseFolder) -> Iterator[Violation]:
    """A file is there but cannot be read as UTF-8 text."""
    for name, why in case.unreadable.items():
        yield Violation(name, why, "save it as UTF-8")


@rule("C103", "python-syntax", ERROR, why="a file that does not parse cannot be imported, so the case cannot run")
def python_syntax(case: CaseFolder) -> Iterator[Violation]:
    """case.py, broken.py, fixed.py (or fast.py) is not valid Python."""
    for name, (msg, line) in case.syntax_errors.items():
        yield Violation(name, f"does not parse: {msg}", "fix the syntax", line)


@rule("C104", "kernel-docstring", ERROR,
      why="the module docstring tells the story of the trap; the report shows it beside the code")
def kernel_docstring(case: CaseFolder) -> Iterator[Violation]:
    """broken.py or fixed.py has no module docstring."""
    for name in KERNELS:
        if name in case.trees and not ast.get_docstring(case.trees[name]):
            yield Violation(name, "has no docstring", "open the file with the story, as Triton's tutorials do")


@rule("C105", "case-functions", ERROR, needs=("case.py",),
      why="the harness calls make_inputs for the arguments and reference for the right answer")
def case_functions(case: CaseFolder) -> Iterator[Violation]:
    """case.py does not define make_inputs() and reference()."""
    names = top_level_names(case.trees["case.py"])
    for fn in ("make_inputs", "reference"):
        if fn not in names:
            yield Violation("case.py", f"defines no {fn}()", MISSING_HINTS["case.py"])


def launcher_name(case: CaseFolder) -> str | None:
    name = case.meta.get("launcher")
    return name if isinstance(name, str) and name.isidentifier() else None


@rule("C106", "launcher-missing", ERROR, needs=("meta",),
      why="the harness imports the launcher named in case.toml from each kernel file")
def launcher_missing(case: CaseFolder) -> Iterator[Violation]:
    """broken.py or fixed.py does not define the launcher that case.toml names."""
    name = launcher_name(case)
    for f in KERNELS:
        if name and f in case.trees and name not in top_level_names(case.trees[f]):
            yield Violation(f, f"defines no launcher '{name}' (named in case.toml)",
                          f"define def {name}(...) here, or change launcher in case.toml")


@rule("C107", "launcher-signature", ERROR, needs=("meta", "broken.py", "fixed.py"),
      why="both launchers are called with the same inputs; different parameters make the comparison meaningless")
def launcher_signature(case: CaseFolder) -> Iterator[Violation]:
    """broken.py and fixed.py define the launcher with different parameters."""
    name = launcher_name(case)
    defs = {f: top_level_names(case.trees[f]).get(name) for f in KERNELS} if name else {}
    if all(isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) for d in defs.values()) and defs:
        b, f = (signature(defs[k]) for k in KERNELS)
        if b != f:
            yield Violation("fixed.py", f"the launcher is {name}({f}) but broken.py has {name}({b})",
                          "give both the same parameters: the harness calls either with the same inputs",
                          defs["fixed.py"].lineno)
