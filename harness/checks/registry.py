"""The rules of ``check``: each a function of a ``CaseFolder`` that yields ``Violation``s.

A rule is declared where it is written::

    @rule("C301", "section-empty", ERROR, needs=("readme",), why="...")
    def section_empty(case: CaseFolder) -> Iterator[Violation]:
        '''A section that must hold text has none.'''

``code`` is stable (a test or a reviewer may cite it); the hundreds are the family
(``FAMILIES``). ``needs`` names the parts of the folder the rule reads (``NEEDS``):
where one is missing (no case.toml, a syntax error, no interpreter run) the rule is
skipped, not crashed, and another rule has already said why. So rules do not depend
on their order. The docstring's first line says what the rule checks, ``why`` why it
matters; docs/check-rules.md is the table of both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from harness.checks.problem import ERROR, WARNING, Violation

FAMILIES = {
    "C1": "files",
    "C2": "metadata",
    "C3": "write-up",
    "C4": "markers",
    "C5": "records",
    "C6": "interpreter run",
    "C7": "slug",
    "C8": "copies between cases",
    "C9": "the harness",
}

# What a rule may need, and how to tell that a folder has it.
NEEDS: dict[str, Callable] = {
    "meta": lambda case: case.meta is not None,  # case.toml is there and is TOML
    "spec": lambda case: case.spec is not None,  # ... and meets the contract
    "readme": lambda case: case.readme is not None,  # README.md is there and readable
    "case.py": lambda case: "case.py" in case.trees,  # the file is there and parses
    "broken.py": lambda case: "broken.py" in case.trees,
    "fixed.py": lambda case: "fixed.py" in case.trees,
    "run": lambda case: case.interpreter is not None,  # the case was run under the interpreter
}


@dataclass(frozen=True)
class Rule:
    code: str  # C301
    name: str  # section-empty
    level: str  # ERROR or WARNING
    needs: tuple[str, ...]
    check: Callable[..., Iterable[Violation]]
    why: str

    @property
    def family(self) -> str:
        return FAMILIES[self.code[:2]]

    @property
    def what(self) -> str:
        """The first paragraph of the rule's docstring, on one line."""
        doc = (self.check.__doc__ or "").strip().split("\n\n")[0]
        return " ".join(doc.split())

    def applies(self, case) -> bool:
        return all(NEEDS[n](case) for n in self.needs)


RULES: list[Rule] = []


def rule(code: str, name: str, level: str, *, needs: tuple[str, ...] = (), why: str):
    """Register the decorated function as rule ``code``."""
    if code[:2] not in FAMILIES or not code[2:].isdigit() or len(code) != 4:
        raise ValueError(f"rule code {code!r} is not C<family><nn>")
    if level not in (ERROR, WARNING):
        raise ValueError(f"rule {code}: level {level!r}")
    unknown = [n for n in needs if n not in NEEDS]
    if unknown:
        raise ValueError(f"rule {code} needs {unknown}, which NEEDS does not know")

    def register(fn):
        if any(r.code == code or r.name == name for r in RULES):
            raise ValueError(f"rule {code} ({name}) is registered twice")
        RULES.append(Rule(code, name, level, tuple(needs), fn, why))
        return fn

    return register


def crashed(case) -> Iterable[Violation]:
    """A rule raised instead of answering (the engine reports it; the folder's other rules still run)."""
    return ()


CRASHED = Rule("C901", "rule-crashed", ERROR, (), crashed,
               "a malformed folder must give lines, never a traceback; this one names the rule to report")
