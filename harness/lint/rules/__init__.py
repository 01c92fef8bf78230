"""Every rule of ``lint``, one module each; importing this package registers them all.

docs/lint-rules.md lists every rule; ``python -m harness.lint.rules`` prints it.
"""

from __future__ import annotations

import importlib
import pkgutil

from harness.lint.registry import RULES, Rule

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")


def all_rules() -> list[Rule]:
    return sorted(RULES, key=lambda r: r.code)
