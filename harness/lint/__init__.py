"""``harness lint``: the casebook's traps found by reading a kernel's source, with ``ast`` only.

Public API (the probe uses it)::

    from harness.lint import lint_file
    for f in lint_file("my_kernels.py"):
        print(f.code, f.line, f.col, f.message, f.cases, f.confidence)

No import of the linted code, no torch, no Triton. docs/lint-rules.md lists the rules.
"""

from harness.lint.engine import LintError, LintFinding, LintRun, lint_file, lint_paths, lint_source, selected
from harness.lint.registry import RULES, Rule

__all__ = ["LintError", "LintFinding", "LintRun", "RULES", "Rule", "lint_file", "lint_paths", "lint_source",
           "selected"]
