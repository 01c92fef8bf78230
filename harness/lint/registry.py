"""The rules of ``lint``: each one module in ``harness/lint/rules/``, registered by ``@rule``.

A rule is a function of a parsed file (``harness.lint.model.Module``) that yields
``(node, message)`` pairs; the engine turns each into a ``LintFinding`` at the node's
line and column. Declared where it is written::

    @rule("TL101", "unmasked-tile-access", cases=("add-missing-mask",), confidence=HIGH,
          summary="...", bad=BAD, good=GOOD)
    def check(module): ...

``code`` is stable (a ``# casebook: noqa TL101`` or a CI config may cite it); the first
digit is the family (``FAMILIES``). ``cases`` are the casebook cases the rule comes from
(the text output and SARIF's helpUri link the first one's write-up). ``confidence`` says how
often a hit is a real defect: *high* rules fire only on code that is wrong at some size;
*medium* ones on a pattern that is usually wrong; *low* ones are opt-in (``preview``: only
with ``--select`` naming them, or ``--select ALL``). ``bad`` and ``good`` are snippets the
tests lint: the rule must fire on ``bad`` and stay quiet on ``good``.
docs/lint-rules.md is generated from this registry (``python -m harness.lint.rules``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Iterable

HIGH, MEDIUM, LOW = "high", "medium", "low"
BUG, HAZARD = "bug", "hazard"  # a hit's severity: wrong through the launcher as written, or only for some callers
SEVERITIES = (HAZARD, BUG)  # least first: --min-severity keeps those at or above


@dataclass(frozen=True)
class Severity:
    """What a rule may add to a hit, after its case: ``(node, message, case, Severity(HAZARD, "why"))``. Without
    one the engine decides (``engine.severity``)."""

    kind: str
    reason: str

FAMILIES = {
    "TL1": "bounds, masks and strides",
    "TL2": "padding lanes and reductions",
    "TL3": "autotune and accumulators",
    "TL4": "grids and launches",
    "TL5": "integer width and random numbers",
    "TL6": "precision and numerics",
    "TL7": "races and ordering",
}

Hit = tuple  # (node, message), (node, message, case): the case the hit is most like, first; a Severity may follow


@dataclass(frozen=True)
class Rule:
    code: str  # TL101
    name: str  # unmasked-tile-access
    summary: str  # what it finds, one line
    cases: tuple[str, ...]
    confidence: str
    check: Callable[..., Iterable[Hit]]
    bad: str
    good: str
    preview: bool = False

    @property
    def family(self) -> str:
        return FAMILIES[self.code[:3]]

    @property
    def why(self) -> str:
        """The rule's docstring: what goes wrong, and when it does not fire."""
        return " ".join((self.check.__doc__ or "").split())


RULES: list[Rule] = []


def rule(code: str, name: str, *, cases: tuple[str, ...], confidence: str, summary: str, bad: str, good: str,
         preview: bool = False):
    """Register the decorated function as rule ``code``."""
    if code[:3] not in FAMILIES or len(code) != 5 or not code[2:].isdigit():
        raise ValueError(f"rule code {code!r} is not TL<family><nn>")
    if confidence not in (HIGH, MEDIUM, LOW) or (confidence == LOW and not preview):
        raise ValueError(f"rule {code}: confidence {confidence!r} (low-confidence rules are preview)")

    def register(fn):
        if any(r.code == code or r.name == name for r in RULES):
            raise ValueError(f"rule {code} ({name}) is registered twice")
        RULES.append(Rule(code, name, summary, tuple(cases), confidence, fn, bad, good, preview))
        return fn

    return register
